import AgentCore
import AgentLoop
import AgentStore
import AgentSupervision
import AgentWork
import Foundation
import JSONSchema
import Logging

/// The store's read side for the supervisor, run on the store's query thread
/// (``QueryRunner``): the monitors' periodic queries (their rows delivered as `query:NAME`
/// events from `store`) and the workers' store queries (answered with `queryResult` frames).
/// Answers come back to the loop. Without the store nothing runs and requests are refused.
@LoopActor
final class QueryHost {
    private var runner: QueryRunner?
    private var store: AgentStore?
    private let loop: EventLoop
    private let logger: Logger
    private unowned let events: any EventPublisher
    /// The process of a name: a periodic query's rows go to its monitor while it runs.
    var process: (String) -> SupervisedProcess? = { _ in nil }

    init(loop: EventLoop, logger: Logger, events: any EventPublisher) {
        self.loop = loop
        self.logger = logger
        self.events = events
    }

    /// The store queries read (nil: the store is off); before ``start(_:)``.
    func attach(store: AgentStore?) { self.store = store }

    /// Runs the periodic queries of `processes` (at start and after each reload).
    func start(_ processes: [SupervisedProcess]) {
        let queries = processes.flatMap(\.planned.queries)
        guard store != nil else {
            for process in processes where !process.planned.queries.isEmpty {
                logger.warning("has periodic queries, but the store is off: they will not run", metadata: ["process": "\(process.name)"])
            }
            return
        }
        // No query thread or connection until something asks (a start without periodic
        // queries opens neither: both cost the start's loop turns and memory).
        guard !queries.isEmpty || runner != nil else { return }
        guard let runner = openedRunner(else: "the periodic queries will not run") else { return }
        runner.setQueries(queries)
    }

    /// The query thread, opened at the first need; nil when the store is off or cannot be
    /// opened (`consequence`: what the log then says follows).
    private func openedRunner(else consequence: String) -> QueryRunner? {
        if let runner { return runner }
        guard let store else { return nil }
        let inbox = loop.inbox
        do {
            runner = try QueryRunner(storePath: store.path, logger: logger) { [self] query, result in
                // Written as JSON here, on the query thread, not on the loop.
                let payload = result.serializedBytes()
                inbox.post { self.deliver(query, payload) }
            }
        } catch {
            logger.error("cannot open the store for queries: \(error); \(consequence)")
        }
        return runner
    }

    /// Ends the query thread (the agent has stopped).
    func stop() { runner?.stop() }

    /// Hands a query's rows to its monitor as a `query:<name>` event from `store`.
    private func deliver(_ query: PlannedQuery, _ payload: [UInt8]) {
        guard let target = process(query.process), target.hasWorker, target.state == .running || target.state == .starting else { return }
        events.deliver(type: "query:\(query.name)", source: "store", payload: payload, to: target)
    }

    /// Runs `sql` off the loop; `done` is called on the loop (nil: the store is off).
    func submit(sql: String, params: [JSONValue], done: @escaping (Result<JSONValue, QueryProblem>) -> Void) -> Bool {
        guard let runner = openedRunner(else: "this query is refused") else { return false }
        let inbox = loop.inbox
        let done = LoopOwned(done)
        runner.submit(sql: sql, params: params) { result in inbox.post { done.value(result) } }
        return true
    }

    /// Runs `sql` off the loop and writes its rows as JSON there too (4 MiB of values took the
    /// loop tens of ms to write, and escaping can make them more than a frame holds); `done`
    /// is called on the loop (false: the store is off).
    private func submitForWorker(sql: String, params: [JSONValue], done: @escaping (Result<[UInt8], QueryProblem>) -> Void) -> Bool {
        guard let runner = openedRunner(else: "this query is refused") else { return false }
        let inbox = loop.inbox
        let done = LoopOwned(done)
        runner.submit(sql: sql, params: params) { result in
            let bytes = result.flatMap { rows -> Result<[UInt8], QueryProblem> in
                let text = rows.serializedBytes()
                guard text.count <= FrameCodec.largestPart else {
                    return .failure(QueryProblem("the query's result is \(text.count) bytes of JSON, more than a worker takes at once (\(FrameCodec.maxFrameLength >> 20) MiB): narrow it (a LIMIT, fewer columns, an aggregate)"))
                }
                return .success(text)
            }
            inbox.post { done.value(bytes) }
        }
        return true
    }

    /// Runs a worker's store query off the loop and sends the rows back, with the query's id
    /// (the worker's handlers may query at once: each answer goes to its own call).
    func answer(_ body: UnsafeRawBufferPointer, from process: SupervisedProcess) throws {
        guard let (id, json) = QueryFrame.parseRequest(body) else { throw FrameError("query frame of \(body.count) bytes") }
        let request = try? JSONValue.parse(json)
        guard let sql = request?["sql"]?.stringValue else {
            return reply(to: process, id: id, ok: false, Array("the query request has no sql".utf8))
        }
        let params = request?["params"]?.arrayValue ?? []
        let run = { [weak self] in
            guard let self else { return }
            let submitted = submitForWorker(sql: sql, params: params) { [weak self] result in
                switch result {
                case .success(let rows): self?.reply(to: process, id: id, ok: true, rows)
                case .failure(let problem): self?.reply(to: process, id: id, ok: false, Array(problem.description.utf8))
                }
            }
            if !submitted { reply(to: process, id: id, ok: false, Array("the store is off: nothing to query".utf8)) }
        }
        // The chatbot reads its conversations: the lines of the answers given before this
        // message are queued when the answers are (not waited for), so its query waits for
        // them — at once when the writer has nothing left (``AgentStore/whenWritten(_:)``).
        guard process.isChatbot, let store, !store.isSettled else { return run() }
        let inbox = loop.inbox
        let queued = LoopOwned(run)
        store.whenWritten { inbox.post { queued.value() } }
    }

    private func reply(to process: SupervisedProcess, id: UInt64, ok: Bool, _ bytes: [UInt8]) {
        guard process.hasWorker else { return }
        events.send(.queryResult, body: QueryFrame.result(id: id, ok: ok, bytes), to: process)
    }
}
