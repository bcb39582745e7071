import JSONSchema

/// Helpers for the JSON Schemas commands declare.
public enum CommandSchema {
    /// An object schema with these properties (`required` lists the required ones; `open`:
    /// other members are allowed).
    public static func object(_ properties: JSONObject, required: [String] = [], open: Bool = false) -> JSONValue {
        var schema: JSONObject = ["type": "object", "properties": .object(properties)]
        if !required.isEmpty { schema["required"] = .array(required.map { .string($0) }) }
        if !open { schema["additionalProperties"] = false }
        return .object(schema)
    }

    /// A request without members.
    public static let noFields: JSONValue = ["type": "object", "additionalProperties": false, "properties": [:]]
    /// `{"ok": true}`.
    public static let okAnswer: JSONValue = ["type": "object", "required": ["ok"], "properties": ["ok": ["const": true]]]
}
