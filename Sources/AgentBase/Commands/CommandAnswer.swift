import JSONSchema

/// Answers every command layer gives the same way, shared by the features' handlers.
public enum CommandAnswer {
    /// The answer to a command that comes while the agent stops.
    public static let stopping: JSONValue = ["ok": false, "code": "unavailable", "error": "the agent is stopping"]
}

/// `{"ok": true}`: the answer of a command that has nothing more to say.
public struct OKAnswer: Encodable, Sendable, Equatable {
    public let ok = true

    public init() {}
}
