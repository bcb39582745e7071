import JSONSchema

/// Reads a `jsonl/1` module's manifest (`module.json`) into process types, collecting every
/// problem as `pointer: expected …, found …`:
///
///     {"name": "weather", "version": "1.0.0", "protocol": "jsonl/1",
///      "process_types": {"reading": {"kind": "datasource", "command": ["python3", "source.py"],
///                                    "settings": {JSON Schema}, "description": "…"}}}
struct ProgramManifestReader {
    var module: String
    private(set) var problems: [String] = []

    init(module: String) { self.module = module }

    static let rootMembers = ["name", "version", "protocol", "description", "process_types"]
    static let typeMembers = ["kind", "command", "settings", "description", "examples", "subscribe",
                              "input_schema", "output_schema", "heartbeat_timeout"]
    /// The kinds a program may be (the chatbot is the runtime's own).
    static let kinds = ["datasource", "monitor", "logic_adapter", "task"]
    /// The longest command, in arguments.
    static let mostArguments = 256

    mutating func read(_ value: JSONValue) -> [ModuleManifest.ProcessType] {
        guard let root = value.objectValue else {
            problem("", "an object with name, version, protocol and process_types", value)
            return []
        }
        unknownMembers(root, allowed: Self.rootMembers, at: "")
        switch root["name"] {
        case .string(let name)? where name == module: break
        case let found: problem("/name", "\"\(module)\" (the module's folder name)", found)
        }
        if root["version"]?.stringValue?.isEmpty != false { problem("/version", "a non-empty string (e.g. \"1.0.0\")", root["version"]) }
        if root["protocol"]?.stringValue != JSONLinesFrame.protocolName {
            problem("/protocol", "\"\(JSONLinesFrame.protocolName)\" (the only protocol this runtime speaks)", root["protocol"])
        }
        if let description = root["description"], description.stringValue == nil { problem("/description", "a string", description) }
        guard let types = root["process_types"]?.objectValue, !types.isEmpty else {
            problem("/process_types", "an object of process types (e.g. {\"reading\": {\"kind\": \"datasource\", \"command\": [\"python3\", \"source.py\"]}})", root["process_types"])
            return []
        }
        return types.compactMap { type, body in readType(type, body, at: "/process_types/" + JSONPointer.escape(type)) }
    }

    private mutating func readType(_ type: String, _ body: JSONValue, at pointer: String) -> ModuleManifest.ProcessType? {
        if type.isEmpty || type.utf8.count > 200 || !type.unicodeScalars.allSatisfy({ $0.properties.isAlphabetic || ("0"..."9").contains($0) || "_-".unicodeScalars.contains($0) }) {
            problems.append("\(pointer): expected a type name of letters, digits, '_' and '-' (at most 200 bytes), found \"\(type.prefix(80))\"")
        }
        if let problem = ModuleManifest.hostTypeProblem(type, at: pointer) { problems.append(problem) }
        guard let object = body.objectValue else {
            problem(pointer, "an object with kind and command", body)
            return nil
        }
        unknownMembers(object, allowed: Self.typeMembers, at: pointer)
        let kind = object["kind"]?.stringValue ?? ""
        if !Self.kinds.contains(kind) { problem(pointer + "/kind", "one of \(Self.kinds.joined(separator: ", "))", object["kind"]) }
        let description = object["description"]?.stringValue ?? ""
        if let found = object["description"], found.stringValue == nil { problem(pointer + "/description", "a string", found) }
        let schema = self.schema(object["settings"] ?? .object([:]), at: pointer + "/settings", of: type) ?? .object([:])
        var entry = ModuleManifest.ProcessType(type: type, kind: kind, description: description, settingsSchema: schema,
                                               subscribes: strings(object["subscribe"], at: pointer + "/subscribe"))
        entry.usageExamples = strings(object["examples"], at: pointer + "/examples")
        entry.command = command(object["command"], at: pointer + "/command")
        if kind == "task" {
            entry.inputSchema = object["input_schema"].flatMap { self.schema($0, at: pointer + "/input_schema", of: type) }
            entry.outputSchema = object["output_schema"].flatMap { self.schema($0, at: pointer + "/output_schema", of: type) }
            if let timeout = object["heartbeat_timeout"] {
                if let seconds = timeout.numberValue?.doubleValue, seconds > 0, seconds.isFinite {
                    entry.heartbeatTimeout = seconds
                } else {
                    problem(pointer + "/heartbeat_timeout", "a number of seconds > 0", timeout)
                }
            }
        } else {
            for key in ["input_schema", "output_schema", "heartbeat_timeout"] where object[key] != nil {
                problems.append("\(pointer)/\(key): expected no \"\(key)\" (only a task has one), found one")
            }
        }
        return entry
    }

    /// The program's argv: a non-empty array of non-empty strings without NUL.
    private mutating func command(_ value: JSONValue?, at pointer: String) -> [String]? {
        let expected = "a non-empty array of strings, the program and its arguments (e.g. [\"python3\", \"source.py\"])"
        guard let items = value?.arrayValue, !items.isEmpty, items.count <= Self.mostArguments else {
            problem(pointer, expected + ", at most \(Self.mostArguments)", value)
            return nil
        }
        var arguments: [String] = []
        for (index, item) in items.enumerated() {
            guard let text = item.stringValue, !text.isEmpty, !text.utf8.contains(0) else {
                problem("\(pointer)/\(index)", "a non-empty string without NUL", item)
                return nil
            }
            arguments.append(text)
        }
        return arguments
    }

    /// A JSON Schema that compiles, or nil (with the problem noted).
    private mutating func schema(_ value: JSONValue, at pointer: String, of type: String) -> JSONValue? {
        guard value.objectValue != nil || value.boolValue != nil else {
            problem(pointer, "a JSON Schema (an object or a boolean)", value)
            return nil
        }
        do {
            _ = try JSONSchemaValidator(schema: value)
            return value
        } catch {
            problems.append("\(pointer)\(error.schemaLocation): expected a JSON Schema that compiles, found one that does not: \(error.message)")
            return nil
        }
    }

    private mutating func strings(_ value: JSONValue?, at pointer: String) -> [String] {
        guard let value else { return [] }
        guard let items = value.arrayValue, items.allSatisfy({ $0.stringValue?.isEmpty == false }) else {
            problem(pointer, "an array of non-empty strings", value)
            return []
        }
        return items.compactMap(\.stringValue)
    }

    private mutating func unknownMembers(_ object: JSONObject, allowed: [String], at pointer: String) {
        for key in object.keys where !allowed.contains(key) {
            problems.append("\(pointer)/\(JSONPointer.escape(key)): expected one of the members \(allowed.joined(separator: ", ")), found \"\(key.prefix(80))\"\(Suggestions.hint(for: key, in: allowed))")
        }
    }

    private mutating func problem(_ pointer: String, _ expected: String, _ found: JSONValue?) {
        let shown = found.map { value -> String in
            let text = value.serialized()
            return "\(text.count <= 80 ? text : String(text.prefix(77)) + "…") (\(value.typeName))"
        } ?? "nothing (the member is missing)"
        problems.append("\(pointer.isEmpty ? "the document" : pointer): expected \(expected), found \(shown)")
    }
}
