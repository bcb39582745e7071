import JSONSchema

/// Short descriptions of JSON values for error messages: `"fast" (string)`, `42 (integer)`.
public enum Describe {
    public static func value(_ value: JSONValue) -> String {
        switch value {
        case .object(let o): return "an object with \(o.count) \(o.count == 1 ? "property" : "properties")"
        case .array(let a): return "an array of \(a.count) \(a.count == 1 ? "item" : "items")"
        case .null: return "null"
        default:
            var text = value.serialized()
            if text.count > 40 { text = String(text.prefix(37)) + "…" }
            return "\(text) (\(value.typeName))"
        }
    }

    /// "a string", "an integer": the JSON type of `value` with its article.
    public static func article(_ value: JSONValue) -> String {
        let type = value.typeName
        return (type.first.map { "aeiou".contains($0) } == true ? "an " : "a ") + type
    }
}
