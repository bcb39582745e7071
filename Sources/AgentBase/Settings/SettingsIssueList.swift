/// Problems found reading a part of the settings: (pointer, message) pairs.
public struct SettingsIssueList: Error, Sendable {
    public var issues: [(pointer: String, message: String)]
    public init(_ issues: [(pointer: String, message: String)]) { self.issues = issues }
}
