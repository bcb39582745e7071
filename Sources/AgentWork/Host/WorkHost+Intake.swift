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
    /// store cannot write is refused before anything saw it). `source` nil: `cli` or `api`.
    /// The payload is checked and written out off the loop (a megabyte of it took ~0.2 s of a
    /// debug build's loop); the loop only routes it.
    package func publishFromOutside(type: String, payload: JSONValue?, source: String?, caller: CommandCaller,
                                    respond: @escaping (Result<Published, CommandError>) -> Void) {
        let payload = payload ?? .object([:])
        if let problem = Self.nameProblem(type: type, source: source) { return respond(.failure(problem)) }
        if let source, isProcessName(source) {
            return respond(.failure(.invalid("\"\(source)\" is one of the agent's processes: an event from outside may not pass for it; name the system that publishes, e.g. \"shop\"", pointer: "/source")))
        }
        guard publishesWaiting < Self.mostPublishesWaiting else {
            return respond(.failure(.unavailable("\(Self.mostPublishesWaiting) published events wait to be checked and stored already; try again in a moment", retryAfter: 1)))
        }
        publishesWaiting += 1
        let source = source ?? (caller.front == "control" ? "cli" : "api")
        let limit = eventSettings.maximumPayloadBytes, validator = payloadValidators[type]
        let reply = LoopOwned(respond)
        let inbox = loop.inbox
        Task.detached {
            let checked = Self.check(payload, type: type, limit: limit, validator: validator)
            inbox.post { [self] in
                switch checked {
                case .failure(let problem):
                    publishesWaiting -= 1
                    reply.value(.failure(problem))
                case .success(let body):
                    commitAndRoute(type, payload, body, source: source, respond: reply.value)
                }
            }
        }
    }

    /// Commits a checked event (when the store is on), then routes it.
    private func commitAndRoute(_ type: String, _ payload: JSONValue, _ body: [UInt8], source: String,
                                respond: @escaping (Result<Published, CommandError>) -> Void) {
        let now = Self.now()
        let published = Published(type: type, source: source, time: Double(now) / 1e9, stored: storage != nil)
        guard let storage else {
            publishesWaiting -= 1
            route(type, body, source: source, time: now, cascade: 0, stored: false, parsed: payload)
            return respond(.success(published))
        }
        let reply = LoopOwned(respond)
        let inbox = loop.inbox
        storage.commitEvent(type: type, source: source, time: published.time, payload: body) { written in
            inbox.post { [self] in
                publishesWaiting -= 1
                guard written else { return reply.value(.failure(TaskCoordinator.storeError("event was not published"))) }
                route(type, body, source: source, time: now, cascade: 0, stored: true, parsed: payload)
                reply.value(.success(published))
            }
        }
    }

    /// Why the type or the source cannot be published, at its request pointer.
    private static func nameProblem(type: String, source: String?) -> CommandError? {
        if let problem = EventSettings.typeProblem(type) { return .invalid(problem, pointer: "/type") }
        guard let source else { return nil }
        if let problem = PlainName.problem(source, what: "source") { return .invalid(problem + " (e.g. \"shop\")", pointer: "/source") }
        if runtimeSources.contains(source) {
            return .invalid("\"\(source)\" is a source the runtime's own events carry; name the system that publishes, e.g. \"shop\"", pointer: "/source")
        }
        return nil
    }

    /// The payload's JSON text, or why it cannot be published: its depth and size, and the
    /// schema its type declares. Off the loop.
    nonisolated private static func check(_ payload: JSONValue, type: String, limit: Int, validator: JSONSchemaValidator?) -> Result<[UInt8], CommandError> {
        EventSettings.checkPayload(payload, limit: limit).flatMap { body in
            guard let validator, case let problems = validator.validate(payload), let first = problems.first else { return .success(body) }
            let shown = problems.prefix(10)
            let list = shown.map { "/payload\($0.instanceLocation): \($0.message)" }.joined(separator: "; ")
            return .failure(CommandError(.invalid, "the payload does not match the schema declared for \"\(type)\" (/events/types/\(JSONPointer.escape(type))/schema in the settings): \(list)",
                                         pointer: "/payload" + first.instanceLocation,
                                         errors: shown.map { ["pointer": .string("/payload" + $0.instanceLocation), "message": .string($0.message)] }))
        }
    }
}
