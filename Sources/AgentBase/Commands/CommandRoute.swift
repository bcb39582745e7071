import JSONSchema

/// Where the HTTP API serves a command: its method, its path (`{name}` for a member of the
/// request given by the path) and the request members the route fixes (`"action": "stop"`).
public struct CommandRoute: Sendable {
    /// `GET`, `POST`, `PUT`, `DELETE`.
    public var method: String
    public var path: String
    public var fixed: JSONObject
    /// The body is a file of these media types, not JSON: HTTP puts it base64 in `member` and
    /// takes the other members from the query (a voice message's `audio/wav`).
    public var binaryBody: BinaryBody?

    /// A route whose body is a file (see ``binaryBody``).
    public struct BinaryBody: Sendable, Equatable {
        public var member: String
        public var mediaTypes: [String]

        public init(member: String, mediaTypes: [String]) {
            self.member = member
            self.mediaTypes = mediaTypes
        }
    }

    public init(_ method: String, _ path: String, fixed: JSONObject = [:], binaryBody: BinaryBody? = nil) {
        self.method = method
        self.path = path
        self.fixed = fixed
        self.binaryBody = binaryBody
    }

    public static func get(_ path: String) -> CommandRoute { CommandRoute("GET", path) }
    public static func post(_ path: String, fixed: JSONObject = [:]) -> CommandRoute { CommandRoute("POST", path, fixed: fixed) }
    public static func post(_ path: String, binaryBody: BinaryBody) -> CommandRoute { CommandRoute("POST", path, binaryBody: binaryBody) }
    public static func delete(_ path: String) -> CommandRoute { CommandRoute("DELETE", path) }
}
