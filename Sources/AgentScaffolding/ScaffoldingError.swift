/// A scaffolding step that cannot be done, with what to do about it.
public struct ScaffoldingError: Error, CustomStringConvertible, Equatable, Sendable {
    /// A stable code, for scripts and tests.
    public var code: String
    public var message: String
    public var path: String?

    public init(_ code: String, _ message: String, path: String? = nil) {
        self.code = code
        self.message = message
        self.path = path
    }

    public var description: String { path.map { "\($0): \(message)" } ?? message }
}
