import JSONSchema

/// One key a settings schema declares, as the settings reference lists it: its dotted path
/// (`store.retention.events_days`, `processes.<name>.restart.policy`), type, default, bounds,
/// description and an example value.
public struct SchemaKey: Sendable, Equatable {
    public var path: String
    public var type: String
    public var defaultValue: JSONValue?
    public var bounds: [String]
    /// Nil where the schema gives none: a finding (the reference's test lists such keys).
    public var description: String?
    public var example: JSONValue
    /// The key's own schema (`$ref`s to the root's `$defs` left as they are).
    public var schema: JSONValue

    /// Every key `schema` declares, below `path` ("" for the top), in order of path; `$ref`s
    /// are resolved against `root`. A key whose value is an object with keys of its own is
    /// listed, then its keys (`outputs[].type` for the members of an array's objects,
    /// `processes.<name>.type` for a map's).
    public static func all(in schema: JSONValue, root: JSONValue, path: String = "") -> [SchemaKey] {
        var keys: [SchemaKey] = []
        collect(resolve(schema, root), root: root, path: path, into: &keys, depth: 0)
        return keys.sorted { $0.path < $1.path }
    }

    private static func collect(_ schema: JSONValue, root: JSONValue, path: String, into keys: inout [SchemaKey], depth: Int) {
        // The schemas are the runtime's own and finite; the depth only guards a `$ref` cycle.
        guard depth < 12 else { return }
        for (name, member) in properties(of: schema, root: root).sorted(by: { $0.key < $1.key }) {
            let child = path.isEmpty ? name : path + "." + name
            keys.append(SchemaKey(child, member, root: root))
            collect(member, root: root, path: child, into: &keys, depth: depth + 1)
        }
        for (suffix, nested) in nestedSchemas(of: schema, root: root) {
            collect(nested, root: root, path: path + suffix, into: &keys, depth: depth + 1)
        }
    }

    /// The declared members, from the schema and from the branches it may take (`then`,
    /// `else`, `oneOf`, `anyOf`, `allOf`), each resolved; the first declaration of a name wins.
    private static func properties(of schema: JSONValue, root: JSONValue) -> [String: JSONValue] {
        var found: [String: JSONValue] = [:]
        for branch in [schema] + branches(of: schema).map({ resolve($0, root) }) {
            for (name, member) in branch["properties"]?.objectValue ?? [:] where found[name] == nil {
                found[name] = resolve(member, root)
            }
        }
        return found
    }

    private static func branches(of schema: JSONValue) -> [JSONValue] {
        var list: [JSONValue] = []
        for keyword in ["then", "else"] { if let branch = schema[keyword] { list.append(branch) } }
        for keyword in ["oneOf", "anyOf", "allOf"] { list += schema[keyword]?.arrayValue ?? [] }
        return list
    }

    /// Object schemas below this one that are not named members: an array's items (`[]`)
    /// and a map's values (`.<name>`).
    private static func nestedSchemas(of schema: JSONValue, root: JSONValue) -> [(String, JSONValue)] {
        var nested: [(String, JSONValue)] = []
        for branch in [schema] + branches(of: schema).map({ resolve($0, root) }) {
            if let items = branch["items"], items.objectValue != nil {
                nested.append(("[]", resolve(items, root)))
            }
            if let values = branch["additionalProperties"], values.objectValue != nil {
                nested.append((".<name>", resolve(values, root)))
            }
        }
        return nested
    }

    /// The schema with a local `$ref` replaced by what it points at (its own keywords, such
    /// as a description, kept over the target's).
    static func resolve(_ schema: JSONValue, _ root: JSONValue) -> JSONValue {
        guard let reference = schema["$ref"]?.stringValue, reference.hasPrefix("#"),
              let pointer = JSONPointer(String(reference.dropFirst())), var target = root[pointer: pointer]?.objectValue else {
            return schema
        }
        for (key, value) in schema.objectValue ?? [:] where key != "$ref" { target[key] = value }
        return .object(target)
    }

    init(_ path: String, _ schema: JSONValue, root: JSONValue) {
        self.path = path
        type = Self.typeText(schema)
        defaultValue = schema["default"]
        bounds = Self.bounds(schema)
        description = schema["description"]?.stringValue
        example = Self.example(schema, root: root)
        self.schema = schema
    }

    public static func typeText(_ schema: JSONValue) -> String {
        if let values = schema["enum"]?.arrayValue { return "one of " + values.map { $0.serialized() }.joined(separator: ", ") }
        if let value = schema["const"] { return "exactly " + value.serialized() }
        let names: [String] = schema["type"]?.stringValue.map { [$0] } ?? schema["type"]?.arrayValue?.compactMap(\.stringValue) ?? []
        if !names.isEmpty {
            return names.map { name in
                guard name == "array", let items = schema["items"] else { return name }
                let inner = typeText(items)
                return inner == "any" ? "array" : "array of \(inner)"
            }.joined(separator: " or ")
        }
        let alternatives = (schema["oneOf"] ?? schema["anyOf"])?.arrayValue ?? []
        if !alternatives.isEmpty { return alternatives.map(typeText).joined(separator: " or ") }
        return schema["properties"] != nil ? "object" : "any"
    }

    public static func bounds(_ schema: JSONValue) -> [String] {
        let words: [(String, String)] = [
            ("minimum", "≥ "), ("exclusiveMinimum", "> "), ("maximum", "≤ "), ("exclusiveMaximum", "< "),
            ("minLength", "length ≥ "), ("maxLength", "length ≤ "), ("minItems", "items ≥ "), ("maxItems", "items ≤ "),
            ("minProperties", "keys ≥ "), ("maxProperties", "keys ≤ "), ("format", "format "), ("pattern", "pattern "),
        ]
        var list = words.compactMap { keyword, prefix in schema[keyword].map { prefix + ($0.stringValue ?? $0.serialized()) } }
        if schema["uniqueItems"]?.boolValue == true { list.append("unique items") }
        return list
    }

    /// The first candidate (``candidates(_:root:depth:)``) that the key's own schema accepts.
    static func example(_ schema: JSONValue, root: JSONValue) -> JSONValue {
        let tried = candidates(schema, root: root, depth: 0)
        var document = schema.objectValue ?? [:]
        if let definitions = root["$defs"] { document["$defs"] = definitions }
        guard let validator = try? JSONSchemaValidator(schema: .object(document)) else { return tried.first ?? .null }
        return tried.first { validator.validate($0).isEmpty } ?? tried.first ?? .null
    }

    /// Values to try, best first: the schema's `examples`, its default, its enum's values,
    /// then a value of each of its types within its bounds (an object with its required
    /// members).
    static func candidates(_ schema: JSONValue, root: JSONValue, depth: Int) -> [JSONValue] {
        var list = schema["examples"]?.arrayValue ?? []
        if let value = schema["default"] { list.append(value) }
        list += schema["enum"]?.arrayValue ?? []
        if let value = schema["const"] { list.append(value) }
        let types = schema["type"]?.stringValue.map { [$0] } ?? schema["type"]?.arrayValue?.compactMap(\.stringValue) ?? []
        for type in types.filter({ $0 != "null" }) + types.filter({ $0 == "null" }) {
            list.append(value(of: type, schema, root: root, depth: depth))
        }
        for branch in (schema["oneOf"] ?? schema["anyOf"])?.arrayValue ?? [] {
            list += candidates(resolve(branch, root), root: root, depth: depth + 1).prefix(1)
        }
        return list
    }

    private static func value(of type: String, _ schema: JSONValue, root: JSONValue, depth: Int) -> JSONValue {
        switch type {
        case "boolean": return true
        case "integer", "number":
            if let low = schema["minimum"] ?? schema["exclusiveMinimum"], low.numberValue?.doubleValue ?? 0 > 0 {
                return schema["minimum"] ?? .number(JSONNumber(Int((low.numberValue?.doubleValue ?? 0).rounded(.down)) + 1))
            }
            return schema["maximum"].map { $0.numberValue?.doubleValue ?? 1 < 1 ? $0 : 1 } ?? 1
        case "string": return .string(stringExample(schema))
        case "array":
            guard schema["minItems"] != nil, depth < 4 else { return [] }
            return .array(candidates(resolve(schema["items"] ?? [:], root), root: root, depth: depth + 1).prefix(1).map { $0 })
        case "object":
            // The required members, and more while `minProperties` wants them.
            var object = JSONObject()
            guard depth < 4 else { return .object(object) }
            let properties = schema["properties"]?.objectValue ?? [:]
            let required = schema["required"]?.arrayValue?.compactMap(\.stringValue) ?? []
            let wanted = schema["minProperties"]?.numberValue?.intValue ?? 0
            for name in required + properties.keys.filter({ !required.contains($0) }) where object.count < max(required.count, wanted) {
                object[name] = candidates(resolve(properties[name] ?? [:], root), root: root, depth: depth + 1).first ?? .null
            }
            return .object(object)
        default: return .null
        }
    }

    private static func stringExample(_ schema: JSONValue) -> String {
        switch schema["format"]?.stringValue {
        case "date-time"?: return "2026-01-01T00:00:00Z"
        case "uri"?: return "https://example.com/hook"
        case "email"?: return "ops@example.com"
        default:
            // The description's own example (`e.g. "127.0.0.1:8080"`), else a word.
            guard let description = schema["description"]?.stringValue, let start = description.range(of: "e.g. \""),
                  let end = description[start.upperBound...].firstIndex(of: "\"") else { return "text" }
            let quoted = String(description[start.upperBound..<end])
            return quoted.isEmpty ? "text" : quoted
        }
    }
}
