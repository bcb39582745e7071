import AgentRuntime
import Foundation

/// Figure 5: the routing run of figure 4 with the store on — every event also appended to the
/// SQLite event log.
enum StoreBench {
    static func run(_ environment: BenchEnvironment, logFD: Int32) -> Section {
        var section = Section(
            number: 5, title: "Event routing with the store on",
            method: "the 100 B throughput run of figure 4, with the agent's AgentStore (SQLite in WAL mode, synchronous=normal, default settings) handed to the embedded supervisor as agent-control does: the supervisor appends every routed event to the store's queue, its writer thread commits batches of up to 20,000 in one transaction. persisted per second = events committed / (last commit observed − first emit); the commit count is polled every 5 ms. Checked: the store committed every event, dropped none, and the sink received every event in order.")
        let repetitions = environment.quick ? 1 : 3
        let load = RoutingBench.Load(label: "100 B", count: environment.quick ? 50_000 : 100_000, payloadBytes: 100, rate: 0)
        var persisted = Samples()
        var delivered = Samples()
        var supervisorCPU = Samples()
        var batches = Samples()
        var bytesPerEvent = Samples()
        do {
            for repetition in 1...repetitions {
                let outcome = try RoutingBench.throughSupervisor(environment, load, logFD: logFD, withStore: true)
                if !outcome.problems.isEmpty {
                    section.fail("run \(repetition) of \(repetitions): " + outcome.problems.joined(separator: "; "))
                }
                guard let store = outcome.store, store.allCommittedAt > 0 else { continue }
                let seconds = Double(store.allCommittedAt - outcome.result.firstEmitted) / 1e9
                persisted.append(Double(store.committed) / seconds)
                delivered.append(outcome.result.throughput)
                supervisorCPU.append(Double(outcome.cpu.supervisor) / Double(load.count) / 1000)
                batches.append(Double(store.batches))
                bytesPerEvent.append(Double(store.databaseBytes) / Double(store.committed))
            }
        } catch {
            section.fail("\(error)")
        }
        guard !persisted.isEmpty else { return section }
        section.add(Figure("events persisted per second, 100 B", .eventsPerSecond, samples: persisted,
                           note: "\(TableRenderer.grouped(load.count)) events per run"))
        section.add(Figure("  delivered to the monitor meanwhile", .eventsPerSecond, samples: delivered))
        section.add(Figure("  CPU per event: supervisor + store writer", .microseconds, samples: supervisorCPU,
                           note: "figure 4 without the store: the supervisor row"))
        section.add(Figure("  transactions per run", .count, samples: batches))
        section.add(Figure("  database + WAL bytes per event", .count, samples: bytesPerEvent))
        return section
    }
}
