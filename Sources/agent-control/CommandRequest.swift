import AgentBase
import JSONSchema

/// A control-socket request made from a typed command's request value (``AgentCommand``):
/// its name and the members its `Request` encodes — the same members the agent decodes, so
/// the CLI cannot send a request the command does not read.
enum CommandRequest {
    static func make<C: AgentCommand>(_ command: C.Type, _ request: C.Request) throws -> JSONValue {
        var object: JSONObject = ["command": .string(C.name)]
        for (key, value) in try JSONValueEncoder().encode(request).objectValue ?? [:] { object[key] = value }
        return .object(object)
    }

    /// A command without members.
    static func make<C: AgentCommand>(_ command: C.Type) throws -> JSONValue where C.Request == NoFields {
        try make(command, NoFields())
    }
}
