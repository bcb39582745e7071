import AgentBase
import JSONSchema

/// A request for the agent made from a command's typed request (``AgentCommand/Request``): the
/// members as the agent decodes them, with `command` first.
enum CommandRequest {
    static func make<C: AgentCommand>(_ command: C.Type, _ request: C.Request) throws -> JSONValue {
        var object: JSONObject = ["command": .string(C.name)]
        for (key, value) in try JSONValueEncoder().encode(request).objectValue ?? [:] { object[key] = value }
        return .object(object)
    }
}
