/// Compact renderings of instance values for error messages: short enough to read in a log
/// line, precise enough to recognize the value.
enum ValueDescription {
    static let maxStringLength = 40
    static let maxInlineContainerLength = 40

    /// The value as compact JSON; long strings are truncated with `…`, large containers are
    /// summarized as `[...]`/`{...}`.
    static func compact(_ value: JSONValue) -> String {
        switch value {
        case .string(let s):
            return quoted(s)
        case .array(let elements):
            if elements.isEmpty { return "[]" }
            let text = value.serialized()
            return text.count <= maxInlineContainerLength ? text : "[...]"
        case .object(let object):
            if object.isEmpty { return "{}" }
            let text = value.serialized()
            return text.count <= maxInlineContainerLength ? text : "{...}"
        case .number:
            // A number is as long as it was written: a 900,000-digit one came back whole.
            let text = value.serialized()
            return text.count <= maxStringLength ? text : String(text.prefix(maxStringLength)) + "… (\(text.count) characters)"
        default:
            return value.serialized()
        }
    }

    /// The value followed by its JSON type, e.g. `"fast" (string)`, `5 (integer)`,
    /// `[...] (array of 12 items)`.
    static func withType(_ value: JSONValue) -> String {
        switch value {
        case .null:
            return "null"
        case .array(let elements):
            let text = compact(value)
            return text == "[...]" ? "[...] (array of \(count(elements.count, "item")))" : "\(text) (array)"
        case .object(let object):
            let text = compact(value)
            return text == "{...}" ? "{...} (object with \(count(object.count, "property", "properties")))" : "\(text) (object)"
        default:
            return "\(compact(value)) (\(value.typeName))"
        }
    }

    /// A JSON string literal, truncated to `maxStringLength` characters.
    static func quoted(_ string: String) -> String {
        var output = ""
        if string.count > maxStringLength {
            JSONWriter.appendQuoted(String(string.prefix(maxStringLength)) + "…", to: &output)
        } else {
            JSONWriter.appendQuoted(string, to: &output)
        }
        return output
    }

    /// `1 item`, `3 items`.
    static func count(_ n: Int, _ singular: String, _ plural: String? = nil) -> String {
        "\(n) \(n == 1 ? singular : plural ?? singular + "s")"
    }

    /// A list of values for messages: `"a", "b" and "c"`, capped at `limit` entries.
    static func list(_ values: [JSONValue], limit: Int = 10, conjunction: String = ", ") -> String {
        var parts = values.prefix(limit).map(compact)
        if values.count > limit { parts.append("… (\(values.count - limit) more)") }
        return parts.joined(separator: conjunction)
    }

    /// `a string`, `an integer`, `null`, ... for one type name.
    static func article(forType name: String) -> String {
        switch name {
        case "null": return "null"
        case "integer", "object", "array": return "an \(name)"
        default: return "a \(name)"
        }
    }

    /// `a string or null`, `an object, an array or a string`.
    static func describe(_ types: JSONTypeSet) -> String {
        var names = JSONTypeSet.named.filter { types.contains($0.1) }.map { $0.0 }
        // "number" already covers "integer".
        if names.contains("number") { names.removeAll { $0 == "integer" } }
        let phrases = names.map(article(forType:))
        guard phrases.count > 1 else { return phrases.first ?? "nothing" }
        return phrases.dropLast().joined(separator: ", ") + " or " + phrases.last!
    }
}
