import AgentBase
import JSONSchema

/// The `events` section of settings.json: what the agent accepts as an event from outside
/// (`agent-control publish`, `POST /api/events`) — the largest payload, and the types that
/// declare what their payload holds.
///
/// ```json
/// "events": {"max_payload_bytes": 65536,
///            "types": {"order.confirmed": {"description": "A shop confirmed an order.",
///                                          "schema": {"type": "object", "required": ["order"]}}}}
/// ```
public struct EventSettings: Sendable, Equatable {
    /// One declared type: what it means, and the JSON Schema its published payloads must pass.
    public struct Declaration: Sendable, Equatable {
        public var description: String
        public var schema: JSONValue?
    }

    /// The largest payload accepted, in bytes of its JSON text.
    public var maximumPayloadBytes = EventSettings.defaultPayloadBytes
    /// Declared types, by name.
    public var types: [String: Declaration] = [:]

    public static let defaultPayloadBytes = 65_536
    /// The most `max_payload_bytes` may say: routing copies the payload on the loop (16 MiB held a
    /// debug build's loop ~0.26 s; 4 MiB keeps it to a few tens of ms).
    public static let largestPayloadBytes = 4_194_304
    /// Levels of arrays and objects a payload may nest: one less than a run's input, which an
    /// event starting a run wraps (`{"type", "source", "time", "payload"}`).
    public static let deepestPayload = InputNesting.deepest - 1

    public init() {}

    /// The schema of `"events"` (part of the host schema).
    package static let schema: JSONValue = [
        "description": "Events published from outside the agent (`agent-control publish`, POST /api/events): the largest payload, and the types that declare their payload's schema.",
        "type": "object", "additionalProperties": false,
        "properties": [
            "max_payload_bytes": ["type": "integer", "minimum": 2, "maximum": .number(JSONNumber(largestPayloadBytes)),
                                  "default": .number(JSONNumber(defaultPayloadBytes)),
                                  "description": "The largest payload a published event may have, in bytes of its JSON text; larger ones are refused (413)."],
            "types": [
                "description": "Event type → its declaration: a published event of a declared type must pass its \"schema\" (refused at the payload's pointer otherwise). Undeclared types take any payload.",
                "type": "object",
                "additionalProperties": [
                    "type": "object", "additionalProperties": false,
                    "properties": [
                        "description": ["type": "string", "description": "What an event of the type means."],
                        "schema": ["type": ["object", "boolean"], "description": "A JSON Schema (2020-12) the payload must pass."],
                    ],
                ],
            ],
        ],
    ]

    /// The settings' `"events"` (the schema has checked its shapes), and the problems the schema
    /// cannot see: a type name that could not be published, a schema that does not compile.
    package static func read(_ json: JSONValue?) -> (settings: EventSettings, problems: [(pointer: String, message: String)]) {
        var settings = EventSettings()
        var problems: [(pointer: String, message: String)] = []
        if let value = json?["max_payload_bytes"]?.numberValue?.intValue, (2...largestPayloadBytes).contains(value) {
            settings.maximumPayloadBytes = value
        }
        for (name, entry) in json?["types"]?.objectValue ?? [:] {
            let pointer = "/events/types/" + JSONPointer.escape(name)
            if let problem = typeProblem(name) {
                problems.append((pointer, problem))
                continue
            }
            let schema = entry["schema"]
            if let schema, let problem = WorkflowSettings.compileProblem(schema) {
                problems.append((pointer + "/schema", "the schema does not compile: \(problem)"))
                continue
            }
            settings.types[name] = Declaration(description: entry["description"]?.stringValue ?? "", schema: schema)
        }
        return (settings, problems)
    }

    /// A payload's JSON text, or why it cannot be published or signalled (nested too deep, at
    /// its pointer; longer than `limit` bytes). Linear in the payload; run off the loop.
    package static func checkPayload(_ payload: JSONValue, limit: Int) -> Result<[UInt8], CommandError> {
        if let path = InputNesting.pathBeyond(payload, limit: deepestPayload) {
            let pointer = "/payload" + path.map { "/" + JSONPointer.escape($0) }.joined()
            return .failure(.invalid("the payload nests arrays and objects more than \(deepestPayload) levels deep (found a level \(deepestPayload + 1) at \(pointer)); flatten it", pointer: pointer))
        }
        let body = payload.serializedBytes()
        guard body.count <= limit else {
            return .failure(CommandError(.tooLarge, "the payload is \(body.count) bytes of JSON; at most \(limit) are accepted (/events/max_payload_bytes in the settings): send a reference to the data (a path, a URL) instead", pointer: "/payload"))
        }
        return .success(body)
    }

    /// Why `type` cannot be published from outside, or nil: a plain name (letters, digits, `_`,
    /// `-`, `.`; at most 200 bytes; no `:`, which marks the fleet's `fleet:TYPE`), and not a
    /// type the runtime itself publishes (`task.succeeded`…), which a subscriber trusts to
    /// come from the runtime.
    package static func typeProblem(_ type: String) -> String? {
        if let problem = PlainName.problem(type, what: "event type") {
            return problem + " (e.g. \"order.confirmed\")"
        }
        if RuntimeEvent.all.contains(where: { $0.type == type }) {
            return "\"\(type)\" is an event type the runtime publishes itself (see docs/reference/events.md); name your own, e.g. \"shop.\(type)\""
        }
        return nil
    }
}
