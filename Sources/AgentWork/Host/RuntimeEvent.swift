import JSONSchema

/// An event type the runtime itself emits (not a module's), with the members of its payload:
/// declared once (RuntimeEvent+Catalog.swift), published through it (``payload(_:)`` checks
/// what is published against it), and listed from it in docs/reference/events.md, so that the
/// reference cannot name a member the runtime does not send or miss one it does.
public struct RuntimeEvent: Sendable {
    /// A member of the payload.
    public struct Member: Sendable {
        public var name: String
        /// The JSON type, with the form of a string where it has one (`string (ISO 8601 time)`).
        public var type: String
        /// Sent in every event of the type (else only where it applies).
        public var always: Bool
        public var description: String

        public init(_ name: String, _ type: String, always: Bool = true, _ description: String) {
            self.name = name
            self.type = type
            self.always = always
            self.description = description
        }
    }

    /// A payload shape several event types share (every `task.*` of a run's change).
    public struct Payload: Sendable {
        /// What the reference calls it.
        public var name: String
        public var members: [Member]

        public init(_ name: String, _ members: [Member]) {
            self.name = name
            self.members = members
        }
    }

    public var type: String
    /// The `source` its events carry.
    public var source: String
    /// When it is emitted.
    public var summary: String
    public var payload: Payload

    public init(_ type: String, source: String, _ summary: String, _ payload: Payload) {
        self.type = type
        self.source = source
        self.summary = summary
        self.payload = payload
    }

    /// The payload to publish. In a debug build (the tests) a member the declaration does not
    /// have, or a missing one it says is always there, stops the program: declare it, then
    /// regenerate the reference (`agent-control docs --write docs/reference`).
    public func payload(_ object: JSONObject) -> JSONValue {
        assert(object.keys.allSatisfy { key in payload.members.contains { $0.name == key } },
               "\(type): a payload member not declared in RuntimeEvent+Catalog.swift: \(object.keys.filter { key in !payload.members.contains { $0.name == key } })")
        assert(payload.members.allSatisfy { !$0.always || object[$0.name] != nil },
               "\(type): a member RuntimeEvent+Catalog.swift says is always there is missing")
        return .object(object)
    }
}
