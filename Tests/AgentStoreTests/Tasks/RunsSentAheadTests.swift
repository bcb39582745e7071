@testable import AgentBase
@testable import AgentStore
import AgentTestSupport
import Foundation
import GRDB
import Logging
import Testing
@testable import AgentCore

/// A schedule's fire decided ahead goes to the module executor's worker before its instant and
/// is held there (``HeldRuns``) until it comes: the loop, the queue and the pipe are no longer
/// between the instant and the run's start.
@Suite(.ownThreads) struct RunsSentAheadTests {
    static func run(_ token: UInt64, at notBefore: Int64, prepared: Bool = false) -> HeldRuns.Run {
        HeldRuns.Run(token: token, attempt: 1, notBefore: notBefore, runID: Array("r\(token)".utf8), idempotencyKey: [], input: Array("{}".utf8),
                     prepared: prepared)
    }

    /// Held runs are handed over at their instant, never before, in the order of their
    /// instants whatever the order they came in.
    @Test func heldRunsAreReleasedAtTheirInstantsInOrder() throws {
        let released = LockedValue<[(token: UInt64, at: Int64)]>([])
        let held = HeldRuns { runs in
            let now = TaskExecutor.realtimeNanoseconds()
            released.withLock { $0 += runs.map { ($0.token, now) } }
        }
        let start = TaskExecutor.realtimeNanoseconds()
        let instants: [UInt64: Int64] = [1: start + 120_000_000, 2: start + 60_000_000, 3: start + 60_000_000, 4: start + 180_000_000]
        for token in [1, 2, 3, 4] as [UInt64] { held.hold(Self.run(token, at: instants[token]!)) }
        let deadline = Date().addingTimeInterval(10)
        while released.withLock({ $0.count }) < 4, Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
        let order = released.withLock { $0 }
        #expect(order.map(\.token) == [2, 3, 1, 4])
        for (token, at) in order { #expect(at >= instants[token]!, "run \(token) was released \(instants[token]! - at) ns early") }
        #expect(held.count == 0)
    }

    /// A held run taken back (cancelled before its instant) is never handed over.
    @Test func aHeldRunTakenBackIsNeverReleased() throws {
        let released = LockedValue<[UInt64]>([])
        let held = HeldRuns { runs in released.withLock { $0 += runs.map(\.token) } }
        let start = TaskExecutor.realtimeNanoseconds()
        held.hold(Self.run(7, at: start + 80_000_000))
        held.hold(Self.run(8, at: start + 80_000_000))
        #expect(held.remove(token: 7)?.token == 7)
        #expect(held.remove(token: 9) == nil)
        let deadline = Date().addingTimeInterval(10)
        while released.withLock({ $0.isEmpty }), Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
        Thread.sleep(forTimeInterval: 0.1)
        #expect(released.withLock { $0 } == [8])
        #expect(held.remove(token: 8) == nil, "already handed over")
    }

    /// The runs of an instant are taken from the queue when the holder starts watching the
    /// clock; one that comes for the same instant after that is handed over all the same, at
    /// or after its instant.
    @Test func aRunHeldInTheLastStretchBeforeItsInstantIsStillReleased() throws {
        let released = LockedValue<[(token: UInt64, at: Int64)]>([])
        let held = HeldRuns { runs in
            let now = TaskExecutor.realtimeNanoseconds()
            released.withLock { $0 += runs.map { ($0.token, now) } }
        }
        let instant = TaskExecutor.realtimeNanoseconds() + 100_000_000
        held.hold(Self.run(1, at: instant))
        // Into the holder's last stretch (it starts at least minimumSpin before the instant).
        while TaskExecutor.realtimeNanoseconds() < instant - HeldRuns.minimumSpin / 2 {}
        held.hold(Self.run(2, at: instant))
        let deadline = Date().addingTimeInterval(10)
        while released.withLock({ $0.count }) < 2, Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
        let order = released.withLock { $0 }
        #expect(order.map(\.token) == [1, 2])
        for (token, at) in order { #expect(at >= instant, "run \(token) was released \(instant - at) ns early") }
    }

    /// Runs the module prepared are handed over by a job on the cooperative pool, all of an
    /// instant in one call, at or after the instant. The holder waits for the pool for up to
    /// 20 s here (a fresh-clone CI run saw the test process's pool busy past the 1 ms of the
    /// default 20 instants running); a holder that wakes after the instant, on a loaded
    /// machine, hands them over at once itself: the instant is tried again then.
    @Test func preparedRunsOfOneInstantAreHandedOverTogetherFromThePool() throws {
        let calls = LockedValue<[(tokens: [UInt64], at: Int64, onPool: Bool)]>([])
        let poolThreads = LockedValue<Set<String>>([])
        let held = HeldRuns(pool: { job in
            HeldRuns.onPool {
                poolThreads.withLock { _ = $0.insert(Self.threadID()) }
                job()
            }
        }, poolGrace: 20_000_000_000) { runs in
            let now = TaskExecutor.realtimeNanoseconds()
            let thread = Self.threadID()
            let onPool = poolThreads.withLock { $0.contains(thread) }
            calls.withLock { $0.append((runs.map(\.token), now, onPool)) }
        }
        // The longest last stretch: a late wake-up is then less likely.
        held.noteWakeUp(late: 10_000_000)
        var fromPool = 0
        // On a loaded machine (the whole suite on two cores) the holder can wake after the
        // instant several instants running.
        for attempt in 0..<20 where fromPool == 0 {
            let instant = TaskExecutor.realtimeNanoseconds() + 80_000_000
            let tokens = (1...5).map { UInt64(attempt * 10 + $0) }
            for token in tokens { held.hold(Self.run(token, at: instant, prepared: true)) }
            let deadline = Date().addingTimeInterval(30)
            while calls.withLock({ $0.count }) <= attempt, Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
            Thread.sleep(forTimeInterval: 0.05)
            let seen = calls.withLock { $0 }
            try #require(seen.count == attempt + 1, "\(seen.count) calls after \(attempt + 1) instants")
            #expect(seen[attempt].tokens == tokens)
            #expect(seen[attempt].at >= instant, "handed over \(instant - seen[attempt].at) ns early")
            if seen[attempt].onPool { fromPool += 1 }
        }
        #expect(fromPool == 1, "the holder woke after the instant 20 times: the pool was never asked")
    }

    /// Should no pool thread come (the pool busy with long runs), the holder hands the prepared
    /// runs over itself, a moment after the instant, and the pool's job, when it comes at
    /// last, hands nothing over a second time.
    @Test func preparedRunsAreHandedOverByTheHolderWhenThePoolDoesNotCome() throws {
        let calls = LockedValue<[(tokens: [UInt64], at: Int64)]>([])
        let lateJobs = LockedValue<[@Sendable () -> Void]>([])
        let held = HeldRuns(pool: { job in lateJobs.withLock { $0.append(job) } }) { runs in
            let now = TaskExecutor.realtimeNanoseconds()
            calls.withLock { $0.append((runs.map(\.token), now)) }
        }
        held.noteWakeUp(late: 10_000_000)
        var poolAsked = 0
        for attempt in 0..<20 where poolAsked == 0 {
            let instant = TaskExecutor.realtimeNanoseconds() + 80_000_000
            let tokens = [UInt64(attempt * 10 + 1), UInt64(attempt * 10 + 2)]
            for token in tokens { held.hold(Self.run(token, at: instant, prepared: true)) }
            let deadline = Date().addingTimeInterval(10)
            while calls.withLock({ $0.count }) <= attempt, Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
            // The pool comes at last.
            let jobs = lateJobs.withLock { jobs in defer { jobs.removeAll() }; return jobs }
            for job in jobs { job() }
            Thread.sleep(forTimeInterval: 0.05)
            let seen = calls.withLock { $0 }
            try #require(seen.count == attempt + 1, "handed over \(seen.count) times after \(attempt + 1) instants")
            #expect(seen[attempt].tokens == tokens)
            #expect(seen[attempt].at >= instant)
            guard !jobs.isEmpty else { continue }
            // The holder woke before the instant and asked the pool.
            poolAsked += 1
            #expect(jobs.count == HeldRuns.poolSpinners, "one job per pool thread that watches the clock")
            #expect(seen[attempt].at >= instant + held.poolGrace, "the holder did not wait for the pool until the instant plus its grace")
        }
        #expect(poolAsked == 1, "the holder woke after the instant 20 times: the pool was never asked")
    }

    /// A pool thread still handing an instant's runs over when the holder's wait for it ends
    /// (a release slower than ``HeldRuns/poolGrace``) is waited for: the runs go once, and the
    /// holder goes on to the next instant. (This wait once crashed the worker: a deadline past
    /// 2262 makes Foundation's `NSCondition.wait(until:)` trap.) The grace is 20 ms here, for
    /// a loaded machine to start the pool's thread within it.
    @Test func theHolderWaitsForAPoolThreadStillHandingOverPastItsGrace() throws {
        let calls = LockedValue<[(tokens: [UInt64], onPool: Bool)]>([])
        let poolThreads = LockedValue<Set<String>>([])
        let grace: Int64 = 20_000_000
        let held = HeldRuns(pool: { job in
            Thread.detachNewThread {
                poolThreads.withLock { _ = $0.insert(Self.threadID()) }
                job()
            }
        }, poolGrace: grace) { runs in
            let onPool = poolThreads.withLock { $0.contains(Self.threadID()) }
            // Slower than the grace the holder waits for the pool: past it by 10 ms.
            if runs.count == 1, let instant = runs.first?.notBefore {
                while TaskExecutor.realtimeNanoseconds() < instant + grace + 10_000_000 { Thread.sleep(forTimeInterval: 0.001) }
            }
            calls.withLock { $0.append((runs.map(\.token), onPool)) }
        }
        held.noteWakeUp(late: 10_000_000)
        var slowOnPool = 0
        for attempt in 0..<20 where slowOnPool == 0 {
            let instant = TaskExecutor.realtimeNanoseconds() + 80_000_000
            let slow = UInt64(attempt * 10 + 1)
            let next = [UInt64(attempt * 10 + 2), UInt64(attempt * 10 + 3)]
            held.hold(Self.run(slow, at: instant, prepared: true))
            for token in next { held.hold(Self.run(token, at: instant + 60_000_000, prepared: true)) }
            let deadline = Date().addingTimeInterval(10)
            while calls.withLock({ $0.count }) < 2 * (attempt + 1), Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
            Thread.sleep(forTimeInterval: 0.03)
            let seen = calls.withLock { $0 }
            try #require(seen.count == 2 * (attempt + 1), "\(seen.map(\.tokens)) after attempt \(attempt + 1)")
            #expect(seen[2 * attempt].tokens == [slow])
            #expect(seen[2 * attempt + 1].tokens == next, "the next instant went on")
            if seen[2 * attempt].onPool { slowOnPool += 1 }
        }
        #expect(slowOnPool == 1, "the holder woke after the instant 20 times: the pool was never asked")
    }

    static func threadID() -> String { "\(pthread_self())" }

    /// The holder watches the clock for longer when its wake-ups come late (a halted virtual
    /// CPU wakes hundreds of µs late), within bounds, and for less again once they are on time.
    @Test func theLastStretchFollowsTheWakeUpsLatenessWithinBounds() {
        let held = HeldRuns { _ in }
        #expect(held.spin == HeldRuns.minimumSpin)
        held.noteWakeUp(late: 300_000)
        #expect(held.spin == 400_000, "the lateness plus 100 µs")
        held.noteWakeUp(late: 0)
        #expect(held.spin == 325_000, "a quarter less per instant on time")
        held.noteWakeUp(late: 50_000_000)
        #expect(held.spin == HeldRuns.maximumSpin, "a wake-up 50 ms late is the machine's load: at most 500 µs")
        for _ in 0..<60 { held.noteWakeUp(late: 0) }
        #expect(held.spin == HeldRuns.minimumSpin, "decays back once wake-ups are on time")
    }

    /// Through the real binaries: each fire's `task.started` is announced before its instant
    /// (the run went ahead to the executor's worker), and the handler starts at the instant,
    /// never before it.
    @Test func aScheduledModuleTaskIsSentAheadAndStartsAtItsInstant() throws {
        let directory = TestPaths.temporaryDirectory("sent-ahead")
        let agent = try AgentRun(settings: """
            {"enabled_modules": ["bench"], "processes": {},
             "tasks": {"noop": {"type": "bench.noop", "max_concurrent": 4}},
             "schedules": {"a": {"every": 1, "run": {"task": "noop"}, "catch_up": "none"},
                           "b": {"every": 1, "run": {"task": "noop"}, "catch_up": "none"}}}
            """, arguments: ["--no-build", "--quiet"], directory: directory)
        #expect(agent.waitForLine(onStderr: true) { $0.contains("control socket:") } != nil, "\(agent.transcript)")
        let sql = """
            SELECT h.planned AS planned, r.data AS data,
                   (SELECT min(e.time) FROM events e WHERE e.type = 'task.started' AND json_extract(e.payload, '$.run_id') = r.id) AS announced
            FROM schedule_history h JOIN task_runs r ON r.id = h.run_id WHERE h.outcome = 'fired' ORDER BY h.planned
            """
        let path = directory + "/.agent/data/agent.sqlite"
        // The executor's worker starts with the first fire; the next ones go ahead to it. The
        // store is read beside the agent (read-only, as its own queries read it) until six
        // fires are in it and one was announced ahead, for a loaded machine's sake.
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline {
            Thread.sleep(forTimeInterval: 0.5)
            var configuration = Configuration()
            configuration.readonly = true
            configuration.busyMode = .timeout(5)
            guard let rows = try? DatabaseQueue(path: path, configuration: configuration).read({ try Row.fetchAll($0, sql: sql) }) else { continue }
            let ahead = rows.filter { row in (row["announced"] as Double?).map { $0 < row["planned"] } ?? false }
            if rows.count >= 6, !ahead.isEmpty { break }
        }
        #expect(agent.stop() == 0, "\(agent.transcript)")

        let store = try AgentStore(path: path, settings: StoreSettings(), logger: Logger(label: "test"))
        defer { store.close() }
        let rows = try store.withWriter { db in try Row.fetchAll(db, sql: sql) }
        #expect(rows.count >= 6, "\(rows.count) fires\n\(agent.transcript)")
        var sentAhead = 0
        for row in rows {
            let planned: Double = row["planned"]
            let data: String = row["data"]
            let record = try #require(try JSONSerialization.jsonObject(with: Data(data.utf8)) as? [String: Any])
            guard record["status"] as? String == "succeeded" else { continue }
            let output = try #require(record["output"] as? [String: Any], "\(record)")
            let started = try #require((output["started_ns"] as? NSNumber)?.int64Value)
            #expect(started >= Int64((planned * 1e9).rounded(.down)), "the handler started \(Double(Int64(planned * 1e9) - started) / 1e6) ms before its instant")
            if let announced: Double = row["announced"], announced < planned { sentAhead += 1 }
        }
        // The first fire or two start the executor's worker; the rest go ahead, unless the
        // machine is so loaded that a fire's commit takes longer than the 50 ms it is decided
        // ahead (then its runs are released at the instant, as a command task's are).
        #expect(sentAhead >= 1, "none of \(rows.count) fires was sent ahead")
    }
}
