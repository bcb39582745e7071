import JSONSchema

/// What a module says about itself: its name, version and process types.
public struct ModuleManifest: Equatable, Sendable {
    /// One process type of a module.
    public struct ProcessType: Equatable, Sendable {
        public var type: String
        public var kind: String
        public var description: String
        public var settingsSchema: JSONValue
        /// Event types a process of this type receives unless its settings say otherwise.
        public var subscribes: [String]
        /// Logic adapters: example questions.
        public var usageExamples: [String] = []
        /// Monitors: queries over the event log the runtime runs for them.
        public var queries: [QueryDeclaration] = []
        /// Task handlers: the JSON Schema of a run's input (nil: any JSON) and of its output.
        public var inputSchema: JSONValue?
        public var outputSchema: JSONValue?
        /// Task handlers: seconds a run may go without a heartbeat before its worker is
        /// killed (nil: no watchdog).
        public var heartbeatTimeout: Double?
        /// A `jsonl/1` module's program for this type (argv; run in ``ModuleManifest/directory``);
        /// nil for a library's type.
        public var command: [String]?

        public init(type: String, kind: String, description: String, settingsSchema: JSONValue, subscribes: [String]) {
            self.type = type
            self.kind = kind
            self.description = description
            self.settingsSchema = settingsSchema
            self.subscribes = subscribes
        }
    }

    /// A periodic query as a module declares it; `every` and `window` are numbers of seconds
    /// or `"$setting"` references to the process's settings.
    public struct QueryDeclaration: Equatable, Sendable {
        public var name: String
        public var sql: String
        public var every: JSONValue
        public var window: JSONValue
    }

    public var name: String
    public var version: String
    public var processes: [ProcessType]
    /// A `jsonl/1` module's folder, where its programs run; nil for a library.
    public var directory: String?
    /// The types and kinds alone, as a module gives them to a host that deferred its manifest
    /// (`agent_module_defer_manifest`): no descriptions, no schemas.
    public var isPartial = false

    public init(name: String, version: String, processes: [ProcessType], directory: String? = nil) {
        self.name = name
        self.version = version
        self.processes = processes
        self.directory = directory
    }

    /// The kinds a process type may have.
    public static let kinds: Set<String> = ["datasource", "monitor", "logic_adapter", "chatbot", "task"]
    /// Process types the runtime itself provides (an executor is a capacity, no module's
    /// process): a module's type of that name would be shadowed, so a manifest may not declare one.
    public static let hostProcessTypes: Set<String> = ["executor"]

    /// The problem of a manifest's process type named like one of the runtime's, if it is.
    static func hostTypeProblem(_ type: String, at pointer: String) -> String? {
        guard hostProcessTypes.contains(type) else { return nil }
        return "\(pointer): expected a process type name the runtime does not provide itself (\(hostProcessTypes.sorted().joined(separator: ", "))), found \"\(type)\"; rename the type"
    }

    /// Decodes the manifest JSON; every missing or mistyped field is reported with its pointer.
    /// `partialAllowed`: the host deferred the manifest, so it may be partial (`"partial":
    /// true`: types and kinds, whose schemas are neither required nor compiled).
    public init(json text: String, module: String, file: String, partialAllowed: Bool = false) throws(ModuleLoadError) {
        let value: JSONValue
        do {
            value = try JSONValue.parse(text)
        } catch {
            throw ModuleLoadError(.invalidManifest, module: module, file: file,
                                  "the manifest is not valid JSON (\(error)); the module's agent_module_entry must return a JSON object in manifest_json")
        }
        var problems: [String] = []
        func string(_ object: JSONObject?, _ key: String, at pointer: String) -> String {
            guard let field = object?[key] else {
                problems.append("\(pointer)/\(key): missing")
                return ""
            }
            guard let s = field.stringValue, !s.isEmpty else {
                problems.append("\(pointer)/\(key): expected a non-empty string, found \(field.serialized()) (\(field.typeName))")
                return ""
            }
            return s
        }
        guard let root = value.objectValue else {
            throw ModuleLoadError(.invalidManifest, module: module, file: file,
                                  "the manifest must be a JSON object, found \(value.typeName)")
        }
        name = string(root, "name", at: "")
        version = string(root, "version", at: "")
        processes = []
        switch root["partial"] {
        case nil, .bool(false)?:
            break
        case .bool(true)? where partialAllowed:
            isPartial = true
        case .bool(true)?:
            throw ModuleLoadError(.invalidManifest, module: module, file: file,
                                  "the manifest is partial (\"partial\": true) although the host did not defer it; a module may return a partial manifest only after agent_module_defer_manifest() was called")
        case let other?:
            problems.append("/partial: expected a boolean, found \(other.typeName)")
        }
        switch root["processes"] {
        case nil:
            problems.append("/processes: missing")
        case .array(let list)?:
            for (index, item) in list.enumerated() {
                let pointer = "/processes/\(index)"
                guard let object = item.objectValue else {
                    problems.append("\(pointer): expected an object, found \(item.typeName)")
                    continue
                }
                let type = string(object, "type", at: pointer)
                if let problem = Self.hostTypeProblem(type, at: pointer + "/type") { problems.append(problem) }
                let kind = string(object, "kind", at: pointer)
                if !kind.isEmpty, !Self.kinds.contains(kind) {
                    problems.append("\(pointer)/kind: expected one of datasource, monitor, logic_adapter, task, found \"\(kind)\"")
                }
                let description = object["description"]?.stringValue ?? ""
                let schema = object["settings_schema"] ?? .object([:])
                if isPartial {
                    // Checked where the whole manifest was read (the describe); not used here.
                } else if schema.objectValue == nil, schema.boolValue == nil {
                    problems.append("\(pointer)/settings_schema: expected a JSON Schema (object or boolean), found \(schema.typeName)")
                } else {
                    // The manifest is untrusted: a schema that does not compile (a pattern
                    // that is not a regex, a bound no counter holds) is the module's error here,
                    // once, rather than a surprise wherever the schema is used.
                    do {
                        _ = try JSONSchemaValidator(schema: schema)
                    } catch {
                        problems.append("\(pointer)/settings_schema\(error.schemaLocation): the settings schema of \"\(type)\" does not compile: \(error.message)")
                    }
                }
                var subscribes: [String] = []
                if let list = object["subscribes"] {
                    if let items = list.arrayValue, items.allSatisfy({ $0.stringValue != nil }) {
                        subscribes = items.compactMap(\.stringValue)
                    } else {
                        problems.append("\(pointer)/subscribes: expected an array of strings, found \(list.typeName)")
                    }
                }
                var entry = ProcessType(type: type, kind: kind, description: description,
                                        settingsSchema: schema, subscribes: subscribes)
                entry.usageExamples = object["usage_examples"]?.arrayValue?.compactMap(\.stringValue) ?? []
                for (queryIndex, query) in (object["queries"]?.arrayValue ?? []).enumerated() {
                    guard let name = query["name"]?.stringValue, let sql = query["sql"]?.stringValue,
                          let every = query["every"], let window = query["window"] else {
                        problems.append("\(pointer)/queries/\(queryIndex): expected an object with name, sql, every and window")
                        continue
                    }
                    entry.queries.append(QueryDeclaration(name: name, sql: sql, every: every, window: window))
                }
                if kind == "task" {
                    for key in ["input_schema", "output_schema"] {
                        guard let schema = object[key] else { continue }
                        if schema.objectValue == nil, schema.boolValue == nil {
                            problems.append("\(pointer)/\(key): expected a JSON Schema (object or boolean), found \(schema.typeName)")
                            continue
                        }
                        do {
                            _ = try JSONSchemaValidator(schema: schema)
                        } catch {
                            problems.append("\(pointer)/\(key)\(error.schemaLocation): the \(key == "input_schema" ? "input" : "output") schema of \"\(type)\" does not compile: \(error.message)")
                            continue
                        }
                        if key == "input_schema" { entry.inputSchema = schema } else { entry.outputSchema = schema }
                    }
                    if let timeout = object["heartbeat_timeout"] {
                        if let seconds = timeout.numberValue?.doubleValue, seconds > 0, seconds.isFinite {
                            entry.heartbeatTimeout = seconds
                        } else {
                            problems.append("\(pointer)/heartbeat_timeout: expected a number of seconds > 0, found \(timeout.serialized())")
                        }
                    }
                }
                processes.append(entry)
            }
        case let other?:
            problems.append("/processes: expected an array, found \(other.typeName)")
        }
        if !problems.isEmpty {
            // A worker's deferred manifest can be wrong where the describe's whole one was right.
            let which = partialAllowed ? "the manifest it gives a worker after agent_module_defer_manifest()" : "the manifest"
            throw ModuleLoadError(.invalidManifest, module: module, file: file,
                                  which + " is invalid: " + problems.joined(separator: "; ") + "; fix the module's manifest")
        }
    }

    /// The process type named `type`, if this module provides it.
    public func processType(_ type: String) -> ProcessType? {
        processes.first { $0.type == type }
    }
}
