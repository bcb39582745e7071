import AgentCore
import AgentLoop
import AgentStore
import AgentSupervision
import Foundation
import JSONSchema
import Logging

extension Supervisor {
    /// Starts running the monitors' periodic queries (needs the store).
    func startQueries() {
        let queries = processes.flatMap(\.planned.queries)
        guard let store else {
            for process in processes where !process.planned.queries.isEmpty {
                logger.warning("has periodic queries, but the store is off: they will not run", metadata: ["process": "\(process.name)"])
            }
            return
        }
        if queryRunner == nil {
            let inbox = loop.inbox
            let bound = LoopBound(value: self)
            do {
                queryRunner = try QueryRunner(storePath: store.path, logger: logger) { query, result in
                    inbox.post { bound.value.deliverQueryResult(query, result) }
                }
            } catch {
                logger.error("cannot open the store for periodic queries: \(error); they will not run")
                return
            }
        }
        queryRunner?.setQueries(queries)
    }

    /// Hands a query's rows to its monitor as a `query:<name>` event from `store`.
    func deliverQueryResult(_ query: PlannedQuery, _ result: JSONValue) {
        guard let process = processes.first(where: { $0.name == query.process }), process.hasWorker,
              process.state == .running || process.state == .starting else { return }
        let type = Array("query:\(query.name)".utf8)
        let payload = Array(result.serialized().utf8)
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        let now = Int64(ts.tv_sec) * 1_000_000_000 + Int64(ts.tv_nsec)
        type.withUnsafeBytes { typeBytes in
            payload.withUnsafeBytes { payloadBytes in
                let emitted = EventFrame.Emitted(type: typeBytes, timeNanoseconds: now, payload: payloadBytes)
                Array("store".utf8).withUnsafeBytes { EventFrame.appendDelivery(emitted, source: $0, to: process.outgoing) }
            }
        }
        process.eventsDelivered += 1
        markDirty(process)
    }
}
