import JSONSchema

/// A process the settings list with `"enabled": false`: the supervisor does not run
/// it, and `status` shows it as `disabled` so that it does not silently vanish.
public struct DisabledProcess: Sendable, Equatable {
    public var name: String
    public var type: String
    /// The module providing the type, when the settings validator could resolve it.
    public var module: String?

    public init(name: String, type: String, module: String?) {
        self.name = name
        self.type = type
        self.module = module
    }

    /// As `status --json` shows it, beside the running processes.
    public var json: JSONValue {
        var object: JSONObject = ["name": .string(name), "type": .string(type), "state": "disabled"]
        if let module { object["module"] = .string(module) }
        return .object(object)
    }
}
