import AgentBase
import AgentCore
import AgentWork
import CAgentStore
import CAgentSystem
import Foundation
import GRDB
import GRDBSQLite
import Logging

/// The agent's memory: events, per-process state and run history in SQLite (WAL mode).
///
/// The supervisor hands records over with ``append(type:source:time:payload:)`` and friends,
/// which only take a lock and append to a list; a writer thread commits them in batches, one
/// transaction per batch, off the routing path. An event is *acknowledged* once its batch is
/// committed (``statistics``). If the disk is full or the database cannot be written, the
/// store says so in the log and in `status`, retries every few seconds, and the agent keeps
/// running: events are dropped (counted), changes of acknowledged runs are kept in a bounded
/// buffer (``RetainedWrites``) and written once it can, and commits whose caller waits for
/// them (a new run, a memory write) are refused, so that their request is refused.
public final class AgentStore: Sendable {
    public let path: String
    public let settings: StoreSettings
    package let logger: Logger
    let database: DatabaseQueue
    /// Checkpoints the WAL off the writer thread (`database`'s connection calls it: its
    /// `prepareDatabase` closure keeps it alive as long).
    private let checkpointer: WALCheckpointer
    /// What waits for the writer thread, and the figures (see ``Queued``).
    let queued = Guarded(Queued())
    /// New runs a request waits for, durable before the writer has them; the store's lock.
    package let runJournal: RunJournal

    package struct PendingEvent: Sendable {
        package var time: Double
        package var type: String
        package var source: String
        /// JSON text, as the process emitted it.
        package var payload: [UInt8]
    }

    /// Opens (creating) the database and starts the writer. Throws if it cannot be opened.
    public convenience init(path: String, settings: StoreSettings, logger: Logger) throws {
        try self.init(path: path, settings: settings, logger: logger, checkpointWait: WALCheckpointer.writerWait)
    }

    /// SQLite's process-wide settings, before its first connection (see agent_store_sqlite.c):
    /// no initial bulk for each connection's page cache, no memory statistics. Once; a process
    /// that opened a connection before (a test's) keeps SQLite's defaults.
    private static let sqliteConfigured: Bool = agent_store_configure_sqlite() == 0

    /// Applies ``sqliteConfigured`` (the first call does the work); whether the settings hold.
    @discardableResult
    package static func configureSQLite() -> Bool { sqliteConfigured }

    /// The same, with the longest the writer waits for the checkpoint thread at 8 MiB of WAL
    /// (a test makes the bound exact with a wait longer than any checkpoint).
    package init(path: String, settings: StoreSettings, logger: Logger, checkpointWait: Double) throws {
        Self.configureSQLite()
        self.path = path
        self.settings = settings
        self.logger = logger
        // The folder 0700 and the database 0600 whatever the umask (SQLite gives its WAL and
        // shared-memory files the database's mode).
        try PrivateFiles.makeDirectories(URL(fileURLWithPath: path).deletingLastPathComponent().path)
        try PrivateFiles.create(path)
        // Before the database is touched: another agent on it is refused here.
        let journal = try RunJournal.lock(for: path)
        var configuration = Configuration()
        configuration.busyMode = .timeout(5)
        let synchronous = settings.synchronous == "full" ? "FULL" : "NORMAL"
        let maximumPages = ProcessInfo.processInfo.environment["AGENT_STORE_MAX_PAGES"].flatMap(Int.init)
        let checkpointer = WALCheckpointer(path: path, logger: logger, writerWait: checkpointWait)
        self.checkpointer = checkpointer
        configuration.prepareDatabase { db in
            // The page size first: it holds only for a new database (an older one keeps its own).
            try db.execute(sql: "PRAGMA page_size = \(Self.pageSize); PRAGMA journal_mode = WAL; PRAGMA synchronous = \(synchronous)")
            checkpointer.install(on: db.sqliteConnection, checkpointPages: try Self.checkpointPages(db))
            // For tests of a full disk: a hard cap on the database's size.
            if let maximumPages { try db.execute(sql: "PRAGMA max_page_count = \(maximumPages)") }
        }
        do {
            database = try DatabaseQueue(path: path, configuration: configuration)
            try StoreSchema.migrator.migrate(database)
        } catch {
            // A migration may have grown the WAL enough to start the thread.
            checkpointer.stop()
            RunJournal.unlock(journal)
            throw error
        }
        do {
            runJournal = try RunJournal.recovered(descriptor: journal, databasePath: path, database: database, synchronous: settings.synchronous == "full",
                                                  logger: logger)
        } catch {
            checkpointer.stop()
            RunJournal.unlock(journal)
            throw error
        }
        if let refused = SystemThread.run(Self.writerThreadName, { [self] in writeLoop() }) {
            checkpointer.stop()
            runJournal.close()
            throw StoreOpenError("cannot start the store's writer: \(refused)")
        }
    }

    /// The page size of a new database (an existing one keeps its own: SQLite cannot change it
    /// in WAL mode). 16 KiB pages cost the writer ~0.1 µs per event less than SQLite's 4 KiB
    /// with the checkpoint at the same bytes (benchmarks/HISTORY.md, stops 51 and 52).
    package static let pageSize = 16_384

    /// The WAL is checkpointed from 4 MiB whatever the page size (SQLite counts pages: its
    /// default 1,000 was 4 MiB with 4 KiB pages), by the checkpoint thread; the writer copies
    /// what is left at twice that (``WALCheckpointer``). 16 MiB between checkpoints filled the
    /// full-disk tests' small disks.
    package static let checkpointBytes = 4 << 20

    /// WAL checkpoints that copied frames (see ``WALCheckpointer/Counts``).
    package var checkpoints: WALCheckpointer.Counts { checkpointer.counts }

    /// The kernel's name (comm) of the thread that checkpoints the WAL (see ``WALCheckpointer``).
    package static let checkpointThreadName = "agent-wal-ckpt"
    /// The writer thread's name (Foundation's `Thread.name` names no OS thread on Linux).
    package static let writerThreadName = "agent-store"

    /// ``checkpointBytes`` in the database's own pages.
    package static func checkpointPages(_ db: Database) throws -> Int {
        let pageSize = try Int.fetchOne(db, sql: "PRAGMA page_size") ?? 4096
        return max(1, checkpointBytes / max(512, pageSize))
    }

    // MARK: Handing records over (any thread; cheap)

    /// Queues an event for the log.
    public func append(type: String, source: String, time: Double, payload: [UInt8]) {
        payload.withUnsafeBytes { append(type: type, source: source, time: time, payload: $0) }
    }

    /// Queues an event for the log: its payload is copied (into the writer's pending buffer,
    /// no allocation of its own).
    public func append(type: String, source: String, time: Double, payload: UnsafeRawBufferPointer) {
        let limit = settings.queueLimit
        if queued.withLock({ $0.append(count: 1, limit: limit) { $0.append(type: type, source: source, time: time, payload: payload) } }) {
            queued.signal()
        }
    }

    /// Queues a run of `count` events of one source and type for the log: `entries` are
    /// `event` frames as the source emitted them (a `deliverRun` frame's entries, well-formed:
    /// see `EventFrame.appendRun`), copied at once; the writer takes each one's time and payload.
    package func appendRun(type: String, source: String, entries: UnsafeRawBufferPointer, count: Int) {
        guard count > 0 else { return }
        let run = PendingEvents.Run(type: type, source: source, entries: Array(entries), count: count)
        let limit = settings.queueLimit
        if queued.withLock({ $0.append(count: count, limit: limit) { $0.append(run) } }) { queued.signal() }
    }

    /// Queues an event whose payload is given as text.
    public func append(type: String, source: String, time: Double, payload: String) {
        append(type: type, source: source, time: time, payload: Array(payload.utf8))
    }

    /// Commits an event in the writer's next transaction (at once, never dropped for the
    /// queue's limit); `done` runs on the writer thread with true once it is committed, false
    /// when the store cannot write: for an event whose publisher is answered only once it is
    /// durable (`agent-control publish`, POST /api/events).
    package func commitEvent(type: String, source: String, time: Double, payload: [UInt8], done: @escaping @Sendable (Bool) -> Void) {
        let event = PendingEvent(time: time, type: type, source: source, payload: payload)
        queued.withLock { $0.committedEvents.append((event, done)) }
        queued.signal()
    }

    /// Replaces a process's state; `done` runs (on the writer thread) once it is committed.
    public func saveState(process: String, data: [UInt8], done: (@Sendable (Bool) -> Void)? = nil) {
        queued.withLock { $0.states.append((process, data, done)) }
        queued.signal()
    }

    /// Adds a line to the run history: in the writer's next transaction (`atOnce`: a command's
    /// audit, which `agent-control history` is expected to show as soon as the command has
    /// answered), or else committed with what else waits within the commit interval, as events
    /// are (a start's lines; ``whenWritten(within:_:)`` has them written at once).
    public func record(_ entry: HistoryEntry, atOnce: Bool = true) {
        if queued.withLock({ $0.append(entry, atOnce: atOnce) }) { queued.signal() }
    }

    /// Records a task run's new state (see ``SQLiteRunStore``): appended to the writer's next
    /// batch, so that the loop never waits for the disk, and committed with what else waits
    /// within the commit interval, as events are (a reader's ``whenWritten(within:_:)`` and a
    /// new run's ``commitSchedules(_:done:)`` have it written at once).
    package func recordRun(_ run: TaskRun, journaled seq: UInt64? = nil) {
        if queued.withLock({ queued -> Bool in
            queued.runs.append(run)
            if let seq {
                queued.journaled = max(queued.journaled, seq)
                queued.journaledIDs.append(run.id)
            }
            guard queued.runs.count == 1 else { return false }
            // The first: its group commit's clock starts, and the writer sets its wake-up.
            queued.oldestRunSince = Date()
            return true
        }) { queued.signal() }
    }

    /// Nothing waits to be written and the writer is idle: a reader starting now sees every
    /// write queued before.
    package var isSettled: Bool { queued.withLock(\.isSettled) }

    /// Runs `done` once everything queued before it has been committed (or could not be): a
    /// reader that starts after it sees those writes. At once, on the caller's thread, when
    /// nothing waits and the writer is idle (a read after writes long done costs no hand-off);
    /// else on the writer thread after its next transaction.
    /// At most `limit` seconds: a writer stuck on a full disk, or one that has stopped, does
    /// not hold a read (which then shows what is committed); `done` runs once either way.
    package func whenWritten(within limit: Double = 2, _ done: @escaping @Sendable () -> Void) {
        if isSettled { return done() }
        let once = OnceFlag()
        commitSchedules(ScheduleCommit()) { _ in if once.claim() { done() } }
        DispatchQueue.global().asyncAfter(deadline: .now() + limit) { if once.claim() { done() } }
    }

    /// Commits a schedule change (its runs, states and history together) in the writer's next
    /// transaction; `done` runs on the writer thread once it is committed (or could not be).
    package func commitSchedules(_ change: ScheduleCommit, done: @escaping @Sendable (Bool) -> Void) {
        queued.withLock { $0.scheduleCommits.append((change, done)) }
        queued.signal()
    }

    /// Commits a shared-memory write in the writer's next transaction; `done` runs on the writer
    /// thread once it is committed, refused (compare-and-set) or could not be written.
    package func commitMemory(_ write: MemoryWrite, done: @escaping @Sendable (Result<MemoryEntry?, MemoryError>) -> Void) {
        queued.withLock { $0.memoryWrites.append((write, done)) }
        queued.signal()
    }

    /// Commits a workflow change (runs and step records together) in the writer's next
    /// transaction; `done` runs on the writer thread once it is committed (or could not be,
    /// and whether the run journal keeps it then).
    package func commitWorkflows(_ change: WorkflowCommit, done: @escaping @Sendable (WorkflowCommitOutcome) -> Void) {
        queued.withLock { $0.workflowCommits.append((change, done)) }
        queued.signal()
    }

    /// Calls `done` (on the writer thread) once the changes of task run `id` handed to
    /// ``recordRun(_:journaled:)`` before it are written (true), or, the store failing to write,
    /// with whether the latest of each is kept in the run journal, where a kill does not lose
    /// it: an answer that promises a run's end says so only then. At once, false, when the
    /// writer has stopped.
    package func whenRunKept(_ id: String, done: @escaping @Sendable (Bool) -> Void) {
        guard queued.withLock({ queued -> Bool in
            guard !queued.writerDone, !queued.stopping else { return false }
            queued.runWaiters.append(RunWaiter(id: id, done: done))
            return true
        }) else { return done(false) }
        queued.signal()
    }

    /// Every process's saved state.
    public func loadStates() -> [String: [UInt8]] {
        (try? database.read { db in
            var result: [String: [UInt8]] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT process, data FROM state") {
                let data: Data = row["data"]
                result[row["process"]] = Array(data)
            }
            return result
        }) ?? [:]
    }

    public var statistics: StoreStatistics {
        queued.withLock { queued in
            var copy = queued.stats
            copy.pending = queued.events.count
            return copy
        }
    }

    /// Writes what is queued and stops the writer (waits up to `timeout` seconds).
    public func close(timeout: Double = 10) {
        queued.withLock { $0.stopping = true }
        queued.broadcast()
        let deadline = Date().addingSaturated(timeout)
        queued.withLock(waitingUntil: { $0.writerDone ? nil : deadline }) { _ in }
    }

    // MARK: The writer thread

    /// Events committed in one transaction at most.
    package static let batchLimit = 20_000

    private func writeLoop() {
        agent_set_thread_name(Self.writerThreadName)
        var retention = RetentionClock(maximumAge: settings.maximumAge, maximumEvents: settings.maximumEvents, maximumRuns: settings.maximumRuns,
                                       maximumBytes: settings.maximumBytes)
        var retryAfter: Date?
        var retained = RetainedWrites(limit: settings.queueLimit)
        var journalMark = runJournal.mark
        var unwritten = UnwrittenChanges()
        // Whether the log said that `max_bytes` is passed with no event left to delete.
        var sizeWarned = false
        var file = StoreFileIdentity(path: path)
        // Whether the last look found the file gone: nothing is written, retention included.
        var fileGone = false
        while true {
            // Kept changes are tried again when the retry is due.
            let due = retention.due
            let wake = retained.isEmpty ? due : min(due, retryAfter ?? due)
            let commitInterval = settings.commitInterval
            let (taken, finished) = queued.withLock(waitingUntil: { $0.sleep(wake: wake, commitInterval: commitInterval) }) { queued in
                let taken = queued.take()
                queued.writing = !taken.isEmpty
                return (taken, queued.stopping && queued.events.isEmpty)
            }
            let batch = taken.events, stateBatch = taken.states, historyBatch = taken.history, chatBatch = taken.chat
            let runBatch = taken.runs, scheduleBatch = taken.schedules, memoryBatch = taken.memory, workflowBatch = taken.workflows
            let committedEvents = taken.committedEvents
            unwritten.journaledRuns.formUnion(taken.journaledIDs)
            let batchEvents = batch.reduce(0) { $0 + $1.count }

            if let wait = retryAfter, Date() < wait, !finished {
                // Still failing recently: do not hammer a full disk; count what is dropped.
                drop(batchEvents, states: stateBatch, history: historyBatch.count, chat: chatBatch)
                let journaled = keep(runBatch, workflowBatch.map(\.change), in: &retained, &unwritten)
                for waiter in taken.runWaiters { waiter.done(!unwritten.unkeptRuns.contains(waiter.id)) }
                for commit in scheduleBatch { commit.done(false) }
                for write in memoryBatch { write.done(.failure(Self.notWritten(write.write, retrying: true))) }
                for (commit, kept) in zip(workflowBatch, journaled) { commit.done(kept ? .kept : .failed) }
                for event in committedEvents { event.done(false) }
            } else if !taken.isEmpty || !retained.isEmpty {
                do {
                    // What was kept goes first: the batch's changes of the same runs come after it.
                    // The kept changes' lines are written with them: the mark passes those too.
                    let highest = max(taken.journaled, unwritten.keptLine)
                    let mark = highest > journalMark && runJournal.marks ? highest : nil
                    do {
                        try file?.check(now: ProcessInfo.processInfo.systemUptime)
                        fileGone = false
                    } catch {
                        // Everything into the main file, once: then a copy of the removed file
                        // (`/proc/PID/fd/N`, as the message says) holds every commit.
                        if !fileGone { _ = try? database.writeWithoutTransaction { try $0.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)") } }
                        fileGone = true
                        throw error
                    }
                    let outcome = try write(committedEvents.isEmpty ? batch : batch + [PendingEvents.Chunk(committedEvents.map(\.event))], stateBatch.map { ($0.process, $0.data) }, historyBatch, retained.runs + runBatch, scheduleBatch.map(\.change),
                                            memoryBatch.map(\.write), retained.workflows + workflowBatch.map(\.change), chatBatch, journalMark: mark)
                    if let mark {
                        journalMark = mark
                        runJournal.committed(through: mark)
                    }
                    let recovered = queued.withLock { queued -> Bool in
                        queued.stats.committed += batchEvents + committedEvents.count
                        queued.stats.batches += 1
                        queued.stats.refusedRunWrites += outcome.refusedRuns
                        queued.stats.retained = 0
                        defer { queued.stats.degraded = nil }
                        return queued.stats.degraded != nil
                    }
                    if recovered {
                        logger.notice("store: writing again to \(path)\(retained.isEmpty ? "" : "; the \(retained.count) kept change(s) of runs are written")")
                    }
                    retained.clear()
                    runJournal.hold(false)
                    unwritten.written()
                    retention.written(batchEvents + committedEvents.count + runBatch.count + workflowBatch.count + scheduleBatch.count,
                                      bytes: batch.reduce(0) { $0 + $1.byteCount } + committedEvents.reduce(0) { $0 + $1.event.payload.count })
                    // After the figures, so that whoever is told sees them already counted.
                    for state in stateBatch { state.done?(true) }
                    for (commit, written) in zip(scheduleBatch, outcome.commits) { commit.done(written) }
                    for (write, result) in zip(memoryBatch, outcome.memory) { write.done(result) }
                    for commit in workflowBatch { commit.done(.written) }
                    for event in committedEvents { event.done(true) }
                    for waiter in taken.runWaiters { waiter.done(true) }
                    retryAfter = nil
                } catch {
                    degrade(error)
                    drop(batchEvents, states: stateBatch, history: historyBatch.count, chat: chatBatch)
                    let journaled = keep(runBatch, workflowBatch.map(\.change), in: &retained, &unwritten, cannotWriteNow: Self.cannotWriteNow(error))
                    for waiter in taken.runWaiters { waiter.done(!unwritten.unkeptRuns.contains(waiter.id)) }
                    for commit in scheduleBatch { commit.done(false) }
                    for write in memoryBatch { write.done(.failure(Self.notWritten(write.write, retrying: false))) }
                    for (commit, kept) in zip(workflowBatch, journaled) { commit.done(kept ? .kept : .failed) }
                    for event in committedEvents { event.done(false) }
                    retryAfter = Date().addingTimeInterval(5)
                }
            }
            // Settled once this batch's outcome is told (see ``whenWritten(_:)``), before the
            // retention's deletes: a reader waits for the writes queued before it, not for those.
            if !taken.isEmpty { queued.withLock { $0.writing = false } }
            if Date() >= retention.due, !fileGone {
                // A pass cut short is due again at once, after the writes queued meanwhile.
                if enforceRetention(sizeWarned: &sizeWarned) { retention.passed(at: Date()) }
            }
            if finished {
                if !retained.isEmpty {
                    logger.error("store: stopping with \(retained.count) change(s) of runs that could not be written to \(path); the changes kept in its run journal (task runs' and workflow runs') are written at the next start, the others' runs resume from their last written state")
                }
                checkpointer.stop()
                runJournal.close()
                queued.withLock { $0.writerDone = true }
                queued.broadcast()
                return
            }
        }
    }

    private func write(_ batch: [PendingEvents.Chunk], _ stateBatch: [(String, [UInt8])], _ historyBatch: [HistoryEntry], _ runBatch: [TaskRun],
                       _ scheduleBatch: [ScheduleCommit], _ memoryBatch: [MemoryWrite], _ workflowBatch: [WorkflowCommit], _ chatBatch: [ChatWrite],
                       journalMark: UInt64?) throws
        -> (commits: [Bool], refusedRuns: Int, memory: [Result<MemoryEntry?, MemoryError>]) {
        var memoryResults: [Result<MemoryEntry?, MemoryError>] = []
        var commits: [Bool] = []
        var refusedRuns = 0
        try database.inTransaction { db in
            // First: runs a fire requested must be written before later changes of them.
            if !scheduleBatch.isEmpty { commits = try SQLiteScheduleStore.write(scheduleBatch, in: db) }
            try EventInserter.insert(batch, in: db)
            if !stateBatch.isEmpty {
                let upsert = try db.cachedStatement(sql: "INSERT INTO state (process, data, updated) VALUES (?, ?, ?) ON CONFLICT(process) DO UPDATE SET data = excluded.data, updated = excluded.updated")
                let now = Date().timeIntervalSince1970
                for (process, data) in stateBatch { try upsert.execute(arguments: [process, Data(data), now]) }
            }
            if !historyBatch.isEmpty {
                let insert = try db.cachedStatement(sql: "INSERT INTO history (time, process, event, detail, pid, exit_code, signal) VALUES (?, ?, ?, ?, ?, ?, ?)")
                for entry in historyBatch {
                    let pid: Int? = entry.pid.map { Int($0) }
                    let code: Int? = entry.exitCode.map { Int($0) }
                    try insert.execute(arguments: [entry.time, entry.process, entry.event, entry.detail, pid, code, entry.signal])
                }
            }
            if !runBatch.isEmpty { refusedRuns = try SQLiteRunStore.write(runBatch, in: db) }
            if let journalMark { try RunJournal.setMark(journalMark, in: db) }
            // Workflow runs first: a write to a run's keys needs its run.
            if !workflowBatch.isEmpty { try SQLiteWorkflowStore.write(workflowBatch, in: db) }
            if !memoryBatch.isEmpty { memoryResults = try SQLiteMemoryStore.write(memoryBatch, in: db) }
            // In the same transaction: a chat write that fails must not fail a batch already
            // committed (its events would be reported lost and sent again).
            if !chatBatch.isEmpty { try Self.write(chatBatch, in: db) }
            return .commit
        }
        return (commits, refusedRuns, memoryResults)
    }

    private static func notWritten(_ write: MemoryWrite, retrying: Bool) -> MemoryError {
        MemoryError(.unavailable, "the store cannot write now" + (retrying ? " (it failed a moment ago and retries every 5 s)" : "")
                        + ": see the agent's log and `agent-control status`", key: write.key, scope: write.scope)
    }

    /// Keeps the changes of acknowledged work that could not be written, to write them with
    /// the next transaction (the first write of a request's run is not kept: it is refused).
    /// The task runs' and workflow runs' changes go into the run journal's room too (a
    /// workflow run's only until one of its changes does not fit), so that a kill meanwhile
    /// does not lose them (``UnwrittenChanges`` says what is where). A run whose change is in
    /// the journal joins its `journaledRuns`, whose changes are never given up: the mark that
    /// passes its line must come with its change.
    /// Returns, for each of `workflowBatch`, whether the journal holds it.
    private func keep(_ runBatch: [TaskRun], _ workflowBatch: [WorkflowCommit], in retained: inout RetainedWrites,
                      _ unwritten: inout UnwrittenChanges, cannotWriteNow: Bool = true) -> [Bool] {
        let wasEmpty = retained.isEmpty
        let kept = workflowBatch.filter(\.keepIfUnwritten)
        let lostNow: Int
        var journaledWorkflows = [Bool](repeating: false, count: kept.count)
        if cannotWriteNow {
            runJournal.hold(true)
            // Workflows first: a step's task run is journaled only while its workflow run's
            // changes are (made alone at the next open, it would run for a run never made, or
            // beside the step the run starts again).
            journaledWorkflows = kept.map { commit -> Bool in
                let runs = Set(commit.runs.map(\.id) + commit.steps.map(\.runID))
                // A run's definition and input go with its first line of the spell alone.
                var line = commit
                line.unstored.subtract(unwritten.unstoredJournaled)
                guard commit.claim == nil, unwritten.unjournaledWorkflows.isDisjoint(with: runs), let seq = runJournal.appendChange(line) else {
                    unwritten.unjournaledWorkflows.formUnion(runs)
                    return false
                }
                unwritten.unstoredJournaled.formUnion(line.unstored)
                unwritten.keptLine = seq
                return true
            }
            for run in runBatch {
                if run.claim == nil, run.workflowRunID.map({ !unwritten.unjournaledWorkflows.contains($0) }) ?? true,
                   let seq = runJournal.appendChange(run) {
                    unwritten.keptLine = seq
                    unwritten.journaledRuns.insert(run.id)
                    unwritten.unkeptRuns.remove(run.id)
                } else {
                    unwritten.unkeptRuns.insert(run.id)
                }
            }
            lostNow = retained.keep(runs: runBatch, workflows: kept, journaled: journaledWorkflows, protecting: unwritten.journaledRuns)
        } else {
            lostNow = retained.count + runBatch.count + kept.count
            unwritten.unkeptRuns.formUnion(runBatch.map(\.id))
            retained.giveUp(more: runBatch.count + kept.count)
            // A journaled run's first record may be among them: the journal keeps it for the next open.
            runJournal.pin()
        }
        let count = retained.count, lost = retained.lost
        queued.withLock { queued in
            queued.stats.retained = count
            queued.stats.lostChanges = lost
        }
        if wasEmpty, !retained.isEmpty {
            logger.warning("store: keeping the changes of runs it cannot write in memory (at most \(retained.limit), the store's queue_limit), and in its run journal's room as long as that has room; they are written when it can write again, or at the next start if the agent is killed first")
        }
        if lostNow > 0 {
            logger.error("store: \(lostNow) change(s) of runs could not be kept (\(cannotWriteNow ? "more than \(retained.limit) wait" : "the database refused them")): those runs resume from their last written state at the next start")
        }
        var next = journaledWorkflows.makeIterator()
        return workflowBatch.map { $0.keepIfUnwritten ? next.next() ?? false : false }
    }

    /// Whether `error` says the database cannot be written for now (room, I/O, permissions,
    /// a lock), so that what failed may be written later, rather than refused what it was given.
    package static func cannotWriteNow(_ error: any Error) -> Bool {
        guard let sqlite = error as? DatabaseError else { return true }
        return [.SQLITE_FULL, .SQLITE_IOERR, .SQLITE_READONLY, .SQLITE_BUSY, .SQLITE_LOCKED, .SQLITE_CANTOPEN, .SQLITE_NOMEM, .SQLITE_PERM]
            .contains(sqlite.resultCode)
    }

    /// Counts what a batch that is not written loses: its events, its history lines (a
    /// process's start, exit or stop, a command's audit: `dropped_history_lines`), and its chat
    /// lines (a conversation's line queued while the store fails or waits to retry is lost like
    /// an event, so it is counted like one: `dropped_chat_lines`).
    private func drop(_ count: Int, states stateBatch: [(process: String, data: [UInt8], done: (@Sendable (Bool) -> Void)?)],
                      history historyLines: Int, chat chatBatch: [ChatWrite]) {
        for state in stateBatch { state.done?(false) }
        let lines = chatBatch.reduce(0) { count, write in
            if case .line = write { return count + 1 }
            return count
        }
        guard count > 0 || lines > 0 || historyLines > 0 else { return }
        queued.withLock {
            $0.stats.dropped += count
            $0.stats.droppedChatLines += lines
            $0.stats.droppedHistoryLines += historyLines
        }
    }

    func degrade(_ error: any Error) {
        let reason: String
        if let sqlite = error as? DatabaseError {
            switch sqlite.resultCode {
            case .SQLITE_FULL: reason = "the disk (or the database's size limit) is full"
            case .SQLITE_READONLY: reason = "the database is read-only"
            case .SQLITE_IOERR: reason = "an I/O error: \(sqlite.message ?? "")"
            default: reason = "\(sqlite.resultCode): \(sqlite.message ?? "")"
            }
        } else {
            reason = "\(error)"
        }
        let first = queued.withLock { queued -> Bool in
            defer {
                queued.stats.degraded = reason
                queued.stats.writeErrors += 1
            }
            return queued.stats.degraded == nil
        }
        if first {
            if error is StoreFileIdentity.Gone {
                logger.error("store: \(reason). The agent keeps running.")
            } else {
                logger.error("store: cannot write to \(path): \(reason). Events are not stored until this is fixed (retrying every 5 s); the agent keeps running.")
            }
        }
    }

    /// Runs `body` with the writer's connection (prunes asked by a ``RunStore`` user; off the loop).
    package func withWriter<T>(_ body: (Database) throws -> T) throws -> T {
        try database.write(body)
    }
}

/// What `status` shows of the store.
public struct StoreStatistics: Sendable, Equatable {
    /// Events committed (acknowledged) since the agent started.
    public var committed = 0
    public var batches = 0
    /// Events dropped because the queue was full or the database could not be written.
    public var dropped = 0
    /// Chat lines (a message, an answer, an alert, a tool call) lost because the database could
    /// not be written when they were queued (it failed, or waits to retry).
    public var droppedChatLines = 0
    /// History lines (a process's start, exit or stop, a command's audit) lost because the
    /// database could not be written when they were queued (it failed, or waits to retry).
    public var droppedHistoryLines = 0
    /// Events deleted by the retention policy.
    public var expired = 0
    /// The bytes of the database's pages in use when the retention last looked (at the start,
    /// then at each pass): what `retention.max_bytes` bounds.
    public var bytesInUse = 0
    /// Finished task runs deleted by the retention policy.
    public var expiredRuns = 0
    /// Changes of claimed task runs refused because their claim no longer held the run.
    public var refusedRunWrites = 0
    public var writeErrors = 0
    /// Changes of acknowledged runs (task runs' states and results, workflow step logs) the
    /// store could not write yet: kept in memory and written when it can write again.
    public var retained = 0
    /// Such changes given up because more than the store's `queue_limit` waited.
    public var lostChanges = 0
    /// Events waiting to be written.
    public var pending = 0
    /// Why the store is not writing, if it is not.
    public var degraded: String?
}
