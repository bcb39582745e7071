import JSONSchema

/// Where the HTTP API serves a command: its method, its path (`{name}` for a member of the
/// request given by the path) and the request members the route fixes (`"action": "stop"`).
public struct CommandRoute: Sendable {
    /// `GET`, `POST`, `PUT`, `DELETE`.
    public var method: String
    public var path: String
    public var fixed: JSONObject

    public init(_ method: String, _ path: String, fixed: JSONObject = [:]) {
        self.method = method
        self.path = path
        self.fixed = fixed
    }

    public static func get(_ path: String) -> CommandRoute { CommandRoute("GET", path) }
    public static func post(_ path: String, fixed: JSONObject = [:]) -> CommandRoute { CommandRoute("POST", path, fixed: fixed) }
    public static func delete(_ path: String) -> CommandRoute { CommandRoute("DELETE", path) }
}
