import AgentBase
import AgentCore
import JSONSchema

/// Process types the runtime provides itself: the `chatbot`.
package enum BuiltinModules {
    package static let chatLocation = ModuleLocation(name: "chat", library: "builtin:chat", sourceDirectory: nil)

    package static let builtinAdapters = ["features", "status", "process_control", "latest_value", "rest", "llm"]

    package static let chatbotSchema: JSONValue = [
        "type": "object",
        "additionalProperties": false,
        "required": ["logic_adapters"],
        "properties": [
            "logic_adapters": [
                "description": "Adapters asked about every message: built-in (features, status, process_control, latest_value, rest, llm) or <module>.<adapter>; an object adds the adapter's settings.",
                "type": "array",
                "minItems": 1,
                "items": [
                    "oneOf": [
                        ["type": "string", "minLength": 1],
                        ["type": "object", "required": ["type"], "properties": ["type": ["type": "string", "minLength": 1, "description": "The adapter: a built-in one or <module>.<adapter>."]]],
                    ],
                ],
            ],
            "confidence_threshold": ["type": "number", "minimum": 0, "maximum": 1, "default": 0.3,
                                     "description": "The most confident adapter answers only when its confidence is at least this; else the default response."],
            "default_response": ["type": "string", "default": "I am sorry, but I do not understand.", "description": "The answer when no adapter is confident enough."],
            "allow_process_control": ["type": "boolean", "default": false,
                                      "description": "Let the process_control adapter start, stop and restart processes when asked in chat."],
            "preferences_schema": ["type": ["object", "boolean"],
                                   "description": "A JSON Schema (2020-12) the users' custom preferences (chat preferences --set/--json, PUT /api/chat/users/{user}/preferences: custom) must pass; refused at their pointer otherwise."],
            "voice": [
                "type": "object", "additionalProperties": false,
                "description": "Voice messages (chat --voice, POST /api/chat/voice), recognised in the chatbot's worker with PocketSphinx (Debian: libpocketsphinx3, pocketsphinx-en-us; spoken answers: libespeak-ng1).",
                "properties": [
                    "max_bytes": ["type": "integer", "minimum": 1024, "maximum": .number(JSONNumber(VoiceLimits.largestMaximumBytes)),
                                  "default": .number(JSONNumber(VoiceLimits.defaultMaximumBytes)),
                                  "description": "A recording larger than this is refused before it is decoded (HTTP's max_body_bytes applies too); at most 15 MiB, what one message to the chatbot's worker carries."],
                    "max_seconds": ["type": "number", "exclusiveMinimum": 0, "maximum": 600, "default": .number(JSONNumber(VoiceLimits.defaultMaximumSeconds)),
                                    "description": "A recording longer than this (from its header) is refused before its samples are decoded."],
                    "silence_level": ["type": "number", "minimum": 0, "maximum": 32768, "default": .number(JSONNumber(VoiceLimits.defaultSilenceLevel)),
                                      "description": "A recording quieter than this (RMS of 16-bit samples) is refused as silence."],
                    "model": ["type": "string", "minLength": 1, "default": "/usr/share/pocketsphinx/model/en-us",
                              "description": "The PocketSphinx model folder: en-us/ (acoustic model), en-us.lm.bin and cmudict-en-us.dict."],
                ],
            ],
        ],
    ]

    package static let chatManifest: ModuleManifest = {
        let manifest = JSONValue.object([
            "name": "chat", "version": "1.0.0",
            "processes": [[
                "type": "chatbot", "kind": "chatbot", "subscribes": ["chat.message"],
                "description": "Answers chat messages with the most confident of its logic adapters.",
                "settings_schema": chatbotSchema,
            ]],
        ]).serialized()
        do {
            return try ModuleManifest(json: manifest, module: "chat", file: "builtin:chat")
        } catch {
            fatalError("the built-in chat manifest is invalid: \(error)")
        }
    }()

    /// The rest adapter's own keys: a url, and a timeout and retries the worker can use.
    package static func restProblems(_ object: JSONObject, pointer: String) -> [(pointer: String, message: String)] {
        var problems: [(String, String)] = []
        if object["url"]?.stringValue == nil {
            problems.append((pointer, "a rest adapter needs \"url\": the service that scores and answers"))
        }
        if let value = object["timeout"] {
            let seconds = value.numberValue?.doubleValue ?? .nan
            if !(seconds > 0 && seconds <= SettingsBounds.longestTimeout) {
                problems.append((pointer + "/timeout", "expected a number of seconds > 0 and ≤ \(SettingsBounds.longestTimeout.compactText), found \(Describe.value(value))"))
            }
        }
        if let value = object["retries"] {
            if value.numberValue?.intValue.map({ (0...restMostRetries).contains($0) }) != true {
                problems.append((pointer + "/retries", "expected an integer from 0 to \(restMostRetries), found \(Describe.value(value))"))
            }
        }
        return problems
    }

    /// A rest adapter's `retries` at most (each retry waits a little longer).
    package static let restMostRetries = 10

    /// The event types a chatbot's `jsonl/1` adapters subscribe to (their manifests'
    /// `subscribe`): the chatbot receives them too and hands each to the adapters that asked.
    package static func programAdapterSubscriptions(_ settings: JSONObject, manifests: [String: ModuleManifest]) -> [String] {
        var types: [String] = []
        for item in settings["logic_adapters"]?.arrayValue ?? [] {
            let parts = (item.stringValue ?? item["type"]?.stringValue ?? "").split(separator: ".", maxSplits: 1).map(String.init)
            guard parts.count == 2, let adapter = manifests[parts[0]]?.processType(parts[1]), adapter.command != nil else { continue }
            types += adapter.subscribes.filter { !types.contains($0) }
        }
        return types
    }

    /// A chatbot's settings with its `jsonl/1` adapters' settings completed by their schemas'
    /// defaults (a program gets its settings complete, as a process does; a Swift adapter
    /// applies its own).
    package static func withProgramAdapterDefaults(_ settings: JSONObject, manifests: [String: ModuleManifest]) -> JSONObject {
        guard let items = settings["logic_adapters"]?.arrayValue else { return settings }
        var completed = settings
        completed["logic_adapters"] = .array(items.map { item in
            var object: JSONObject = item.stringValue.map { ["type": .string($0)] } ?? item.objectValue ?? [:]
            let parts = (object["type"]?.stringValue ?? "").split(separator: ".", maxSplits: 1).map(String.init)
            guard parts.count == 2, let adapter = manifests[parts[0]]?.processType(parts[1]), adapter.command != nil else { return item }
            let type = object["type"]
            object["type"] = nil
            var filled = SchemaDefaults.apply(adapter.settingsSchema, to: .object(object)).objectValue ?? object
            filled["type"] = type
            return .object(filled)
        })
        return completed
    }

    /// Checks a chatbot's adapters against the enabled modules and their schemas.
    package static func checkAdapters(_ settings: JSONObject, modules: [ModuleLocation], manifests: [String: ModuleManifest]) -> [(pointer: String, message: String)] {
        var problems: [(String, String)] = []
        for (index, item) in (settings["logic_adapters"]?.arrayValue ?? []).enumerated() {
            let object: JSONObject = item.stringValue.map { ["type": .string($0)] } ?? item.objectValue ?? [:]
            let type = object["type"]?.stringValue ?? ""
            let pointer = "/logic_adapters/\(index)"
            if builtinAdapters.contains(type) {
                if type == "rest" { problems += restProblems(object, pointer: pointer) }
                continue
            }
            let parts = type.split(separator: ".", maxSplits: 1).map(String.init)
            let known = modules.flatMap { module in
                (manifests[module.name]?.processes ?? []).filter { $0.kind == "logic_adapter" }.map { "\(module.name).\($0.type)" }
            } + builtinAdapters
            guard parts.count == 2, let manifest = manifests[parts[0]], let adapter = manifest.processType(parts[1]), adapter.kind == "logic_adapter" else {
                problems.append((pointer, "unknown logic adapter \"\(type)\"\(Suggestions.hint(for: type, in: known)); available: \(known.joined(separator: ", "))"))
                continue
            }
            var adapterSettings = object
            adapterSettings["type"] = nil
            if let validator = try? JSONSchemaValidator(schema: adapter.settingsSchema) {
                for error in validator.validate(.object(adapterSettings)) {
                    problems.append((pointer + error.instanceLocation, error.message))
                }
            }
        }
        return problems
    }
}
