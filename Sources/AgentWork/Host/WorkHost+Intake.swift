import AgentBase
import AgentLoop
import Foundation
import JSONSchema

/// Events published from outside the agent (`agent-control publish`, `POST /api/events`):
/// checked (type name, payload size and nesting, the type's declared schema), committed to the
/// store, then routed exactly as a process's emit — to subscribers, `on_event` triggers,
/// waiting workflow runs, and the fleet when it publishes the type.
extension WorkHost {
    /// An event accepted: when it was published and whether the store has it.
    package struct Published: Sendable {
        package var type: String
        package var source: String
        /// Seconds since the epoch.
        package var time: Double
        package var stored: Bool
    }

    /// Published events waiting for their commit at most: beyond, the store is behind and a
    /// publisher is told to come back (503) rather than queue without bound.
    nonisolated package static let mostPublishesWaiting = 10_000

    /// The sources the runtime's own events carry: a publisher may not pass for the runtime.
    nonisolated package static let runtimeSources: Set<String> = Set(RuntimeEvent.all.map(\.source)).union(["workflows", "control"])

    /// Takes a reload's (or the start's) `"events"`: the declared types' schemas compiled once.
    func applyEvents(_ settings: EventSettings) {
        eventSettings = settings
        payloadValidators = [:]
        for (type, declaration) in settings.types {
            if let schema = declaration.schema, let validator = try? JSONSchemaValidator(schema: schema) { payloadValidators[type] = validator }
        }
        workflows?.payloadLimit = settings.maximumPayloadBytes
    }

    /// Publishes an event from outside: answered once it has been routed and, with the store
    /// on, committed (committed first: an event answered "ok" is in the event log, and one the
    /// store cannot write is refused before anything saw it). `source` nil: `cli` or `http`.
    package func publishFromOutside(type: String, payload: JSONValue?, source: String?, caller: CommandCaller,
                                    respond: @escaping (Result<Published, CommandError>) -> Void) {
        let payload = payload ?? .object([:])
        let body: [UInt8]
        switch check(type: type, payload: payload, source: source) {
        case .failure(let refusal): return respond(.failure(refusal))
        case .success(let text): body = text
        }
        let source = source ?? (caller.front == "control" ? "cli" : "api")
        let now = Self.now()
        let published = Published(type: type, source: source, time: Double(now) / 1e9, stored: storage != nil)
        guard let storage else {
            route(type, body, source: source, time: now, cascade: 0, stored: false)
            return respond(.success(published))
        }
        guard publishesWaiting < Self.mostPublishesWaiting else {
            return respond(.failure(.unavailable("\(Self.mostPublishesWaiting) published events wait for the store already; try again in a moment", retryAfter: 1)))
        }
        publishesWaiting += 1
        let inbox = loop.inbox
        let reply = LoopOwned(respond)
        storage.commitEvent(type: type, source: source, time: published.time, payload: body) { written in
            inbox.post { [self] in
                publishesWaiting -= 1
                guard written else { return reply.value(.failure(TaskCoordinator.storeError("event was not published"))) }
                route(type, body, source: source, time: now, cascade: 0, stored: true)
                reply.value(.success(published))
            }
        }
    }

    /// The payload's JSON text, or why the event cannot be published, at its request pointer.
    private func check(type: String, payload: JSONValue, source: String?) -> Result<[UInt8], CommandError> {
        if let problem = EventSettings.typeProblem(type) { return .failure(.invalid(problem, pointer: "/type")) }
        if let source {
            if let problem = PlainName.problem(source, what: "source") { return .failure(.invalid(problem + " (e.g. \"shop\")", pointer: "/source")) }
            if Self.runtimeSources.contains(source) {
                return .failure(.invalid("\"\(source)\" is a source the runtime's own events carry; name the system that publishes, e.g. \"shop\"", pointer: "/source"))
            }
        }
        let limit = eventSettings.maximumPayloadBytes
        if let path = InputNesting.pathBeyond(payload, limit: EventSettings.deepestPayload) {
            let pointer = "/payload" + path.map { "/" + JSONPointer.escape($0) }.joined()
            return .failure(.invalid("the payload nests arrays and objects more than \(EventSettings.deepestPayload) levels deep (found a level \(EventSettings.deepestPayload + 1) at \(pointer)); flatten it", pointer: pointer))
        }
        let body = Array(payload.serialized().utf8)
        guard body.count <= limit else {
            return .failure(CommandError(.tooLarge, "the payload is \(body.count) bytes of JSON; at most \(limit) are accepted (/events/max_payload_bytes in the settings): send a reference to the data (a path, a URL) instead", pointer: "/payload"))
        }
        if let validator = payloadValidators[type] {
            let problems = validator.validate(payload)
            if let first = problems.first {
                let list = problems.prefix(10).map { "/payload\($0.instanceLocation): \($0.message)" }.joined(separator: "; ")
                return .failure(CommandError(.invalid, "the payload does not match the schema declared for \"\(type)\" (/events/types/\(JSONPointer.escape(type))/schema in the settings): \(list)",
                                             pointer: "/payload" + first.instanceLocation,
                                             errors: problems.prefix(10).map { ["pointer": .string("/payload" + $0.instanceLocation), "message": .string($0.message)] }))
            }
        }
        return .success(body)
    }
}
