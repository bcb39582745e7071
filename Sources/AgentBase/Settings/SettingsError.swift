/// One problem in a settings file: where (file and JSON pointer), what was expected and what
/// was found.
public struct SettingsIssue: Error, CustomStringConvertible, Equatable, Sendable {
    public var file: String
    /// JSON pointer into the settings file, e.g. `/processes/trades/interval`.
    public var pointer: String
    public var message: String
    /// The process the problem belongs to, if any.
    public var process: String?
    /// The pointer of the problem this one follows from (e.g. `/enabled_modules` for a type
    /// that a module which did not load may provide): shown under its process, but not
    /// counted as an error of its own.
    public var followsFrom: String?

    public init(file: String, pointer: String, message: String, process: String? = nil, followsFrom: String? = nil) {
        self.file = file
        self.pointer = pointer
        self.message = message
        self.process = process
        self.followsFrom = followsFrom
    }

    public var description: String { "\(file): \(pointer.isEmpty ? "/" : pointer): \(message)" }
}

/// Every problem found in a settings file, reported together.
public struct SettingsError: Error, CustomStringConvertible, Sendable {
    public var issues: [SettingsIssue]

    public init(_ issues: [SettingsIssue]) { self.issues = issues }

    public var description: String {
        let count = issues.count == 1 ? "1 error" : "\(issues.count) errors"
        return "invalid settings (\(count)):\n" + issues.map { "  \($0)" }.joined(separator: "\n")
    }
}
