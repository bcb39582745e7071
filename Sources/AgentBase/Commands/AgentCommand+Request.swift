import JSONSchema

extension AgentCommand {
    /// A request for the agent made from a typed one (what clients such as agent-control
    /// send): `command` first, then the members `request` encodes, as the agent decodes them.
    public static func request(_ request: Request) -> JSONValue {
        var object: JSONObject = ["command": .string(name)]
        // Encoding a request (strings, numbers, JSON values) cannot fail; if it ever did, the
        // agent would refuse the bare command with the member it misses.
        for (key, value) in (try? JSONValueEncoder().encode(request))?.objectValue ?? [:] { object[key] = value }
        return .object(object)
    }
}
