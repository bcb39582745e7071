import JSONSchema

/// Answers every command layer gives the same way, shared by the features' handlers.
public enum CommandAnswer {
    /// The answer to a command that comes while the agent stops.
    public static let stopping: JSONValue = ["ok": false, "code": "unavailable", "error": "the agent is stopping"]
}
