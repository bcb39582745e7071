import AgentModuleKit

/// The no-op task of figure 10 (`"type": "bench.noop"`): takes its start time first thing
/// (CLOCK_REALTIME, ns) and returns it with the request's own stamp, `sent_ns`, found in the
/// input (a run requested with `{"sent_ns": …}`) or in the triggering event's payload (a run
/// of `on_event`, whose input is the event), so that the bench reads request → started from
/// the run's output in the store.
struct BenchNoop: TaskHandler {
    struct Input: Decodable, Sendable {
        struct Payload: Decodable, Sendable {
            var sent_ns: Int64?
        }
        var sent_ns: Int64?
        var payload: Payload?
    }

    struct Output: Encodable, Sendable {
        var sent_ns: Int64?
        var started_ns: Int64
    }

    static let typeName = "noop"
    static let description = "Does nothing; returns its start time (started_ns) and the request's (sent_ns) for agent-bench."
    static var inputSchema: Schema {
        .object([
            "sent_ns": .integer(description: "When the request was sent (CLOCK_REALTIME, ns)."),
            "payload": .object(["sent_ns": .integer(description: "When the triggering event was emitted (CLOCK_REALTIME, ns).")],
                               additionalProperties: true),
        ], additionalProperties: true)
    }

    init(settings: NoSettings) {}

    func run(input: Input, context: TaskContext) async throws -> Output {
        let started = BenchClock.realtimeNanoseconds()
        return Output(sent_ns: input.sent_ns ?? input.payload?.sent_ns, started_ns: started)
    }
}
