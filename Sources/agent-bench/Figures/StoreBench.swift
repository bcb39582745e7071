import AgentBase
import AgentStore
import Foundation
import Logging

/// Figure 5: the same with the store on — routing with the store off and on in the same run
/// (throughput, events persisted per second), the store's raw insert rate, and the latency of
/// a typical periodic query over the event log.
enum StoreBench {
    static func run(_ environment: BenchEnvironment, logFD: Int32) -> Section {
        var section = Section(
            number: 5, title: "The same with the store on: routing, insert rate, query latency",
            method: """
            (a) routing: the 100 B throughput run of figure 4, with the store off and on in turn in the same run: settings "store": {"enabled": false}, or the default (on, at <agent>/.agent/data/agent.sqlite, WAL, synchronous=normal), opened as agent-control opens it and handed to the embedded Supervisor, whose loop then also hands every routed event to the store (a run of events to one subscriber at once: one copy and one lock per run, AgentStore.appendRun; an event routed alone: AgentStore.append); the store's writer thread commits what waits, up to 20,000 events per transaction, once the oldest has waited commit_interval (default 5 ms: group commit). persisted per second = events committed (AgentStore.statistics.committed, which status --json shows as store.committed) / (all committed − first emit), polled every 5 ms; lag = all committed − last receipt by the monitor. CPU per event by thread (/proc/self/task/TID/schedstat): the supervisor's loop thread, the writer thread, the checkpoint thread (agent-wal-ckpt: it copies the WAL back into the database once the WAL holds 4 MiB, the writer itself at 8 MiB; read once all is committed, so a checkpoint still running then is counted in part). Every run checked: committed = emitted = rows in the events table afterwards (counted on a read-only connection), nothing dropped, the monitor got every event in order. \
            (b) insert rate: AgentStore.append (the bytes form the supervisor uses) of N prepared events (trade-like JSON of about 85 B, 3 in 4 of type trade, the others host_stats) into a new store, from the first append until statistics.committed = N. \
            floor, same run: the events of (b) inserted by SQLite alone on the bench's thread (no runtime): a new database as the store makes one (16 KiB pages, WAL, synchronous=normal), a prepared INSERT OR ROLLBACK bound with the C API (as the writer's: no statement journal), 20,000 rows a transaction, into the store's schema (its migrations: the events table, its indexes on (type, time) and run_id; schema v8 had one on (time) too) one row a statement and 128 rows a statement (and 128 with SQLite's default ABORT, which keeps a statement journal of the pages each statement changes, as the writer did before stop 74; and with 4 KiB pages, a new store's before stop 52), into the events table without indexes (1 and 128 rows a statement), and with each of schema v8's three indexes alone (128 rows a statement: what each costs is its CPU per row less the bare table's); rows/s and the thread's CPU per row. \
            before, same run: (a) and (b) once more into a store laid out as schema v8 left it (4 KiB pages, the index on (time): the file made before the store opens it, the index made again once it has), and (c) on that store. \
            (c) queries on the store of (b), 100,000 events spread over the last 10 minutes, through a read-only GRDB connection as the runtime's query runner opens it, the statement prepared once: the sample trade_frequency monitor's periodic query (trades counted by json_extract(payload, '$.pair') since :since), each result checked against the known counts; and what agent-control events reads by default (StoreReader, the newest 100); and a count of the last 60 s by time alone (what the index on (time) served; now a skip-scan of (type, time)).
            """)
        routing(environment, logFD: logFD, into: &section)
        do {
            let store = try insertRate(environment, logFD: logFD, into: &section)
            let legacy = try insertRate(environment, logFD: logFD, legacy: true, into: &section)
            try floors(store.workload, environment, into: &section)
            try queries(store, environment, into: &section)
            try queries(legacy, environment, legacy: true, into: &section)
        } catch {
            section.fail("\(error)")
        }
        return section
    }

    // MARK: (a) routing, store off and on

    static func routing(_ environment: BenchEnvironment, logFD: Int32, into section: inout Section) {
        let pairs = environment.quick ? 1 : 3
        let load = RoutingBench.Load(label: "100 B", count: environment.quick ? 50_000 : 100_000, payloadBytes: 100, rate: 0)
        var throughput = (off: Samples(), on: Samples(), legacy: Samples())
        var loopCPU = (off: Samples(), on: Samples())
        var writerCPU = Samples()
        var checkpointCPU = Samples()
        var persisted = Samples()
        var legacyWriterCPU = Samples()
        var legacyPersisted = Samples()
        var lag = Samples()
        var batches = Samples()
        var bytesPerEvent = Samples()
        var committed = 0
        var emitted = 0
        do {
            for pair in 1...pairs {
                // Alternate which goes first, so that neither always runs on a warmer machine.
                // nil: the store on, laid out as schema v8 left it (the before of stop 51).
                for variant in pair % 2 == 1 ? [false, true, nil] : [nil, true, false] {
                    let withStore = variant ?? true
                    let outcome = try RoutingBench.throughSupervisor(environment, load, logFD: logFD, store: withStore, legacyStore: variant == nil)
                    if !outcome.problems.isEmpty {
                        section.fail("store \(withStore ? "on" : "off"), run \(pair) of \(pairs): " + outcome.problems.joined(separator: "; "))
                    }
                    let perEvent = Double(load.count) * 1000
                    if variant == nil {
                        throughput.legacy.append(outcome.result.throughput)
                        legacyWriterCPU.append(Double(outcome.cpu.storeWriter) / perEvent)
                        if let store = outcome.store, store.allCommittedAt > 0 {
                            legacyPersisted.append(Double(store.committed) / (Double(store.allCommittedAt - outcome.result.firstEmitted) / 1e9))
                        }
                        continue
                    }
                    guard withStore else {
                        throughput.off.append(outcome.result.throughput)
                        loopCPU.off.append(Double(outcome.cpu.loop) / perEvent)
                        continue
                    }
                    throughput.on.append(outcome.result.throughput)
                    loopCPU.on.append(Double(outcome.cpu.loop) / perEvent)
                    writerCPU.append(Double(outcome.cpu.storeWriter) / perEvent)
                    checkpointCPU.append(Double(outcome.cpu.storeCheckpoint) / perEvent)
                    guard let store = outcome.store else { continue }
                    committed += store.committed
                    emitted += load.count + 1
                    guard store.allCommittedAt > 0 else { continue }
                    persisted.append(Double(store.committed) / (Double(store.allCommittedAt - outcome.result.firstEmitted) / 1e9))
                    lag.append(Double(store.allCommittedAt - outcome.result.lastReceived) / 1e6)
                    batches.append(Double(store.batches))
                    bytesPerEvent.append(Double(store.databaseBytes) / Double(max(1, store.committed)))
                }
            }
        } catch {
            section.fail("routing: \(error)")
        }
        if !throughput.off.isEmpty {
            section.add(Figure("throughput 100 B, store off", .eventsPerSecond, samples: throughput.off,
                               note: "\(TableRenderer.grouped(load.count)) events per run; target ≥ 200,000 (store off)"))
            section.add(Figure("  CPU per event: supervisor loop thread", .microseconds, samples: loopCPU.off))
        }
        if !throughput.on.isEmpty {
            section.add(Figure("throughput 100 B, store on (to the monitor)", .eventsPerSecond, samples: throughput.on))
            if !throughput.off.isEmpty {
                section.add(Figure("  ratio store on / off", .ratio, median: throughput.on.median / throughput.off.median,
                                   count: throughput.on.count, note: "of the medians; target (issue 38) ≥ 0.8"))
            }
            section.add(Figure("  CPU per event: supervisor loop thread", .microseconds, samples: loopCPU.on,
                               note: "+ the hand-over to the store (a copy and a lock per run of events)"))
            section.add(Figure("  CPU per event: store writer thread", .microseconds, samples: writerCPU, note: "target (issue 38) ≤ 0.8 µs"))
            section.add(Figure("  CPU per event: store checkpoint thread", .microseconds, samples: checkpointCPU,
                               note: "the WAL copied back into the database beside the writer (stop 61; before, in the writer's commit)"))
        }
        if !persisted.isEmpty {
            section.add(Figure("events persisted per second, store on", .eventsPerSecond, samples: persisted,
                               note: "committed \(TableRenderer.grouped(committed)) of \(TableRenderer.grouped(emitted)) emitted; target (issue 38) ≥ 1,000,000"))
            section.add(Figure("  last delivered → all committed", .milliseconds, samples: lag))
            section.add(Figure("  transactions per run", .count, samples: batches))
            section.add(Figure("  database + WAL bytes per event", .count, samples: bytesPerEvent))
        }
        if !throughput.legacy.isEmpty {
            section.add(Figure("throughput 100 B, store on, schema v8 layout (before stop 51)", .eventsPerSecond, samples: throughput.legacy,
                               note: "4 KiB pages and the index on (time), in the same run"))
            if !throughput.off.isEmpty {
                section.add(Figure("  ratio store on (v8 layout) / off", .ratio, median: throughput.legacy.median / throughput.off.median,
                                   count: throughput.legacy.count, note: "of the medians"))
            }
            section.add(Figure("  CPU per event: store writer thread", .microseconds, samples: legacyWriterCPU))
            if !legacyPersisted.isEmpty { section.add(Figure("  events persisted per second", .eventsPerSecond, samples: legacyPersisted)) }
        }

        // Latency at a fixed rate, off and on, one after the other.
        let seconds = environment.quick ? 2.0 : 5.0
        let latencyLoad = RoutingBench.Load(label: "100 B at 10,000/s", count: Int(10_000 * seconds), payloadBytes: 100, rate: 10_000)
        for withStore in [false, true] {
            do {
                let outcome = try RoutingBench.throughSupervisor(environment, latencyLoad, logFD: logFD, store: withStore)
                if !outcome.problems.isEmpty {
                    section.fail("latency, store \(withStore ? "on" : "off"): " + outcome.problems.joined(separator: "; "))
                }
                section.add(RoutingBench.latencyFigure("latency \(latencyLoad.label), store \(withStore ? "on" : "off")", outcome.result,
                                                       note: withStore ? "target p99 < 1 ms" : nil))
            } catch {
                section.fail("latency, store \(withStore ? "on" : "off"): \(error)")
            }
        }
    }

    // MARK: (b) insert rate

    /// A store of `count` events spread over the `span` seconds before `now`, and what a
    /// query over it must find.
    struct Workload {
        static let pairs = ["BTC/USD", "ETH/USD", "SOL/EUR", "ETH/BTC"]
        var now: Double
        var span: Double
        /// The events, payloads as the bytes a worker emits; `pair` indexes ``pairs`` for trades.
        var events: [(type: String, source: String, time: Double, payload: [UInt8], pair: Int?)] = []

        init(count: Int, span: Double) {
            now = Date().timeIntervalSince1970
            self.span = span
            events.reserveCapacity(count)
            var random = SplitMix(seed: 42)
            for index in 0..<count {
                let time = now - span + span * Double(index + 1) / Double(count)
                if index % 4 == 3 {
                    let payload = #"{"cpu_percent":\#(random.next() % 100),"memory_percent":\#(random.next() % 100),"load1":0.\#(random.next() % 100)}"#
                    events.append(("host_stats", "stats", time, Array(payload.utf8), nil))
                } else {
                    // Skewed towards the first pairs, so that the counts differ.
                    let pairIndex = Int(min(random.next() % 10, random.next() % 10) % 4)
                    let pair = Self.pairs[pairIndex]
                    let side = random.next() % 2 == 0 ? "buy" : "sell"
                    let payload = #"{"pair":"\#(pair)","side":"\#(side)","price":\#(1000 + random.next() % 90_000).\#(random.next() % 100),"amount":0.\#(random.next() % 1000),"sequence":\#(index)}"#
                    events.append(("trade", "feed", time, Array(payload.utf8), pairIndex))
                }
            }
        }

        /// Trades per pair with `time >= since`.
        func tradeCounts(since: Double) -> [String: Int] {
            var counts: [String: Int] = [:]
            for event in events where event.time >= since {
                if let pair = event.pair { counts[Self.pairs[pair], default: 0] += 1 }
            }
            return counts
        }
    }

    /// A store filled by (b): its path and what it holds.
    struct FilledStore {
        var path: String
        var workload: Workload
    }

    /// `legacy`: into a store laid out as schema v8 left it (``LegacyStoreLayout``).
    static func insertRate(_ environment: BenchEnvironment, logFD: Int32, legacy: Bool = false, into section: inout Section) throws -> FilledStore {
        let count = 100_000
        let repetitions = environment.quick ? 1 : 3
        let workload = Workload(count: count, span: 600)
        let logger = Logger(label: "bench") { AgentLogHandler(label: $0, fd: logFD, level: .info) }
        var rate = Samples()
        var handOver = Samples()
        var writerCPUSamples = Samples()
        var checkpointCPUSamples = Samples()
        var batches = Samples()
        var path = ""
        let me = getpid()
        for repetition in 1...repetitions {
            path = environment.folder("store-insert-\(legacy ? "v8-" : "")\(repetition)") + "/.agent/data/agent.sqlite"
            if legacy { try LegacyStoreLayout.create(path: path) }
            let (store, writer) = try ProcFiles.threadsStarted { try AgentStore(path: path, settings: StoreSettings(), logger: logger) }
            defer { store.close() }
            if legacy { try LegacyStoreLayout.restoreTimeIndex(path: path) }
            func writerCPU() -> Int64 { writer.reduce(0) { $0 + ProcFiles.cpuNanoseconds(of: me, thread: $1) } }
            let writerStart = writerCPU()
            let checkpointStart = ProcFiles.cpuByThread(of: me, named: AgentStore.checkpointThreadName)
            let start = Clock.now()
            for event in workload.events {
                store.append(type: event.type, source: event.source, time: event.time, payload: event.payload)
            }
            let handedOver = Clock.now()
            let deadline = handedOver + 60
            var statistics = store.statistics
            while statistics.committed < count, statistics.dropped == 0, statistics.writeErrors == 0, Clock.now() < deadline {
                usleep(200)
                statistics = store.statistics
            }
            let done = Clock.now()
            guard statistics.committed == count else {
                throw BenchError("insert: the store committed \(statistics.committed) of \(count) events (dropped \(statistics.dropped), \(statistics.writeErrors) write errors)")
            }
            rate.append(Double(count) / (done - start))
            handOver.append((handedOver - start) * 1e6 / Double(count))
            if !writer.isEmpty { writerCPUSamples.append(Double(writerCPU() - writerStart) / 1000 / Double(count)) }
            let checkpointSpent = ProcFiles.cpuSpent(from: checkpointStart, to: ProcFiles.cpuByThread(of: me, named: AgentStore.checkpointThreadName))
            checkpointCPUSamples.append(Double(checkpointSpent) / 1000 / Double(count))
            batches.append(Double(statistics.batches))
        }
        let rows = try StoreFile.countEvents(path: path, types: ["trade", "host_stats"])
        if rows != count { throw BenchError("insert: the events table holds \(rows) of the \(count) events committed") }
        section.add(Figure("insert: AgentStore.append → all committed" + (legacy ? ", schema v8 layout (before stop 51)" : ""), .eventsPerSecond, samples: rate,
                           note: legacy ? "4 KiB pages and the index on (time), in the same run" : "\(TableRenderer.grouped(count)) events of about 85 B per run, a new store each"))
        section.add(Figure("  append alone (the caller's cost per event)", .microseconds, samples: handOver))
        if !writerCPUSamples.isEmpty { section.add(Figure("  CPU per event: store writer thread", .microseconds, samples: writerCPUSamples)) }
        section.add(Figure("  CPU per event: store checkpoint thread", .microseconds, samples: checkpointCPUSamples))
        section.add(Figure("  transactions per run", .count, samples: batches))
        return FilledStore(path: path, workload: workload)
    }

    // MARK: (b) the floor

    /// SQLite alone with the events of (b), in the same run (see ``StoreFloor``).
    static func floors(_ workload: Workload, _ environment: BenchEnvironment, into section: inout Section) throws {
        var rate: [StoreFloor.Layout: Samples] = [:]
        var cpu: [StoreFloor.Layout: Samples] = [:]
        for repetition in 1...(environment.quick ? 1 : 3) {
            for layout in StoreFloor.Layout.allCases {
                let path = environment.folder("store-floor-\(layout)-\(repetition)") + "/floor.sqlite"
                let outcome = try StoreFloor.run(layout, events: workload.events, path: path)
                rate[layout, default: Samples()].append(outcome.rowsPerSecond)
                cpu[layout, default: Samples()].append(outcome.cpuMicrosecondsPerRow)
            }
        }
        for layout in StoreFloor.Layout.allCases {
            guard let rows = rate[layout], let perRow = cpu[layout] else { continue }
            section.add(Figure(layout.label, .eventsPerSecond, samples: rows,
                               note: layout == .storeSchema ? "the same events, a new database each run, 20,000 rows a transaction, WAL, synchronous=normal" : nil))
            section.add(Figure("  CPU per row", .microseconds, samples: perRow))
        }
        // Small commits, both page sizes, interleaved: what 16 KiB pages cost acknowledged work.
        let commits = Array(workload.events.prefix(environment.quick ? 300 : 1_000))
        var small: [Int: Samples] = [:]
        for repetition in 1...(environment.quick ? 2 : 3) {
            for pageSize in [AgentStore.pageSize, 4096] {
                let path = environment.folder("store-floor-commits-\(pageSize)-\(repetition)") + "/floor.sqlite"
                small[pageSize, default: Samples()].append(try StoreFloor.singleCommits(pageSize: pageSize, events: commits, path: path).rowsPerSecond)
            }
        }
        for pageSize in [AgentStore.pageSize, 4096] {
            guard let rows = small[pageSize] else { continue }
            section.add(Figure("floor: SQLite, one event a transaction, synchronous=full, \(pageSize / 1024) KiB pages", .eventsPerSecond, samples: rows,
                               note: pageSize == 4096 ? "a new store's page size before stop 52" : "\(commits.count) commits, each waiting for fsync, as acknowledged work does"))
        }
    }

    // MARK: (c) queries

    /// The periodic query of the sample module's `trade_frequency` monitor, as it declares it.
    static let tradeFrequencySQL = """
        SELECT json_extract(payload, '$.' || :key) AS key, count(*) AS n FROM events
        WHERE type = 'trade' AND time >= :since GROUP BY key ORDER BY n DESC, key
        """

    /// `legacy`: the store of (b) laid out as schema v8 left it: the same queries, labelled so.
    static func queries(_ store: FilledStore, _ environment: BenchEnvironment, legacy: Bool = false, into section: inout Section) throws {
        let suffix = legacy ? ", schema v8 layout (before stop 51)" : ""
        let file = try StoreFile(path: store.path)
        let total = store.workload.events.count
        for (window, repetitions) in [(60.0, environment.quick ? 100 : 200), (600.0, environment.quick ? 10 : 30)] {
            let since = store.workload.now - window
            let arguments: [String: StoreFile.Argument] = ["key": .text("pair"), "since": .real(since)]
            let expected = store.workload.tradeCounts(since: since)
            var latency = Samples()
            for _ in 0..<repetitions {
                var rows: [[String: String]] = []
                latency.append(try Clock.milliseconds { rows = try file.rows(sql: tradeFrequencySQL, arguments: arguments) })
                var found: [String: Int] = [:]
                for row in rows { found[row["key"] ?? "?"] = Int(row["n"] ?? "") ?? -1 }
                if found != expected { throw BenchError("query over \(Int(window)) s: found \(found), expected \(expected)") }
            }
            let trades = expected.values.reduce(0, +)
            let plan = try file.plan(sql: tradeFrequencySQL, arguments: arguments)
            section.add(Figure("query: trades by pair, last \(window == 60 ? "60 s" : "10 min")" + suffix, .milliseconds, samples: latency,
                               note: "\(TableRenderer.grouped(trades)) of \(TableRenderer.grouped(total)) events in the window" + (window == 60 ? "; plan: \(plan)" : "")))
        }
        let reader = try StoreReader(path: store.path)
        var newest = Samples()
        for _ in 0..<(environment.quick ? 20 : 50) {
            var events: [StoreReader.StoredEvent] = []
            newest.append(try Clock.milliseconds { events = try reader.events(types: [], since: nil, limit: 100, newest: true) })
            if events.count != 100 { throw BenchError("agent-control events: \(events.count) of 100 events") }
        }
        section.add(Figure("agent-control events: the newest 100" + suffix, .milliseconds, samples: newest, note: "StoreReader, a new read each time"))
        try timeOnlyQuery(store, environment, suffix: suffix, into: &section)
    }
}

extension StoreBench {
    /// A query on time alone, what the index on (time) served before schema v9 (now a
    /// skip-scan of (type, time)): the events of the last 60 s counted, checked.
    static func timeOnlyQuery(_ store: FilledStore, _ environment: BenchEnvironment, suffix: String, into section: inout Section) throws {
        let file = try StoreFile(path: store.path)
        let since = store.workload.now - 60
        let sql = "SELECT count(*) AS n FROM events WHERE time >= :since"
        let arguments: [String: StoreFile.Argument] = ["since": .real(since)]
        let expected = store.workload.events.filter { $0.time >= since }.count
        var latency = Samples()
        for _ in 0..<(environment.quick ? 100 : 200) {
            var rows: [[String: String]] = []
            latency.append(try Clock.milliseconds { rows = try file.rows(sql: sql, arguments: arguments) })
            if rows.first?["n"] != String(expected) { throw BenchError("query on time alone: found \(rows), expected \(expected)") }
        }
        let plan = try file.plan(sql: sql, arguments: arguments)
        section.add(Figure("query: events of the last 60 s (time alone)" + suffix, .milliseconds, samples: latency,
                           note: "\(TableRenderer.grouped(expected)) events; plan: \(plan)"))
    }
}

/// A small deterministic random number generator (SplitMix64), so that every run stores the
/// same events.
struct SplitMix {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
