import AgentWork
import Foundation

extension AgentStore {
    /// What is handed to the writer and not taken yet, with the store's figures: the state of
    /// ``AgentStore`` that several threads share (under one ``Guarded`` lock).
    struct Queued: Sendable {
        var events = PendingEvents()
        /// Events whose publisher waits for their commit (``AgentStore/commitEvent(type:source:time:payload:done:)``):
        /// never dropped for the queue's limit, written at once.
        var committedEvents: [(event: PendingEvent, done: @Sendable (Bool) -> Void)] = []
        var states: [(process: String, data: [UInt8], done: (@Sendable (Bool) -> Void)?)] = []
        var history: [HistoryEntry] = []
        /// Chat lines, clears and preferences, in the order they were asked for.
        var chat: [ChatWrite] = []
        /// Task runs' changes (see ``SQLiteRunStore``).
        var runs: [TaskRun] = []
        /// The highest sequence number of a run in the ``RunJournal`` handed over with `runs`
        /// (never lowered: a batch that fails is kept, and the next carries its mark).
        var journaled: UInt64 = 0
        /// The ids of those runs, handed over since the last batch.
        var journaledIDs: [String] = []
        /// Schedules' fires (see ``SQLiteScheduleStore``): each written in the batch's transaction.
        var scheduleCommits: [(change: ScheduleCommit, done: @Sendable (Bool) -> Void)] = []
        /// Shared memory's writes (see ``SQLiteMemoryStore``), each told its outcome once committed.
        var memoryWrites: [(write: MemoryWrite, done: @Sendable (Result<MemoryEntry?, MemoryError>) -> Void)] = []
        /// Workflow runs' step logs (see ``SQLiteWorkflowStore``): each written in the batch's transaction.
        var workflowCommits: [(change: WorkflowCommit, done: @Sendable (WorkflowCommitOutcome) -> Void)] = []
        /// Who waits to know whether a task run's changes so far are written or kept
        /// (``AgentStore/whenRunKept(_:done:)``).
        var runWaiters: [RunWaiter] = []
        /// When the oldest waiting event was handed over (group commit waits from here).
        var oldestPendingSince = Date.distantPast
        /// When the oldest waiting history line was handed over: lines group-commit as events
        /// do (a start of 20 workers wrote 40 lines in some 35 transactions, each waking the
        /// writer on cores the workers' starts needed).
        var oldestHistorySince = Date.distantPast
        /// When the oldest waiting change of a task run was handed over: runs' changes
        /// group-commit as events do (each change written at once cost a transaction of whole
        /// pages, ~5 of them: three per no-op run one at a time). A new run a request waits for
        /// is not one of them (``AgentStore/commitSchedules(_:done:)``, at once), and it takes
        /// what waits with it.
        var oldestRunSince = Date.distantPast
        /// A line that waits for no group commit (a command's audit) is among the history.
        var historyAtOnce = false
        var stopping = false
        var writerDone = false
        /// The writer took a batch and has not finished it (committed or given it up).
        var writing = false
        var stats = StoreStatistics()

        /// Appends `count` events with `add` (the oldest waiting give way beyond `limit`, counted);
        /// true when the writer is to be woken: the first events, or a full batch.
        mutating func append(count: Int, limit: Int, _ add: (inout PendingEvents) -> Void) -> Bool {
            // Slow disk: the oldest waiting events give way (never acknowledged, so not lost in
            // the store's promise), counted.
            stats.dropped += events.makeRoom(for: count, limit: limit)
            let before = events.count
            add(&events)
            if before == 0 {
                oldestPendingSince = Date()
                return true
            }
            return before < AgentStore.batchLimit && events.count >= AgentStore.batchLimit
        }

        /// Appends a history line; true when the writer is to be woken: a line `atOnce`, or the
        /// first (its group commit's clock starts).
        mutating func append(_ entry: HistoryEntry, atOnce: Bool) -> Bool {
            history.append(entry)
            if atOnce {
                historyAtOnce = true
                return true
            }
            guard history.count == 1 else { return false }
            oldestHistorySince = Date()
            return true
        }

        /// Nothing waits to be written and the writer is not writing: what was queued before is
        /// committed (or given up), and a reader starting now sees it.
        var isSettled: Bool { !writing && events.isEmpty && history.isEmpty && runs.isEmpty && !othersWait }

        /// Whether anything waits that is written at once, without a group commit.
        var othersWait: Bool {
            historyAtOnce || !states.isEmpty || !chat.isEmpty || !scheduleCommits.isEmpty
                || !memoryWrites.isEmpty || !workflowCommits.isEmpty || !committedEvents.isEmpty || !runWaiters.isEmpty
        }

        /// Until when the writer sleeps (nil: it takes a batch now). Asleep until there is work,
        /// or `wake` (retention or a retry due): no idle wake-ups. Group commit: events,
        /// processes' history lines and task runs' changes wait until the oldest has waited
        /// `commitInterval`, so a steady trickle costs one transaction per interval instead of
        /// one per wake-up; anything else (a state save, an audit line, chat, a new run a
        /// request waits for, a reader's wait, stopping) is written at once, with what waits.
        func sleep(wake: Date, commitInterval: Double) -> Date? {
            if stopping || othersWait || events.count >= AgentStore.batchLimit { return nil }
            if events.isEmpty && history.isEmpty && runs.isEmpty { return wake }
            // What waits decides, not `wake`: the retention (or a retry) comes after its commit.
            var until = Date.distantFuture
            if !events.isEmpty { until = min(until, oldestPendingSince.addingSaturated(commitInterval)) }
            if !history.isEmpty { until = min(until, oldestHistorySince.addingSaturated(commitInterval)) }
            if !runs.isEmpty { until = min(until, oldestRunSince.addingSaturated(commitInterval)) }
            return until
        }

        /// Takes what waits: a batch of events (chunks of at least ``AgentStore/batchLimit``
        /// events, or all there are), everything else.
        mutating func take() -> Batch {
            let batch = Batch(events: events.take(atLeast: AgentStore.batchLimit),
                              states: states, history: history, chat: chat, runs: runs,
                              schedules: scheduleCommits, memory: memoryWrites, workflows: workflowCommits, committedEvents: committedEvents, runWaiters: runWaiters,
                              journaled: journaled, journaledIDs: journaledIDs)
            // What is left is already overdue.
            if !events.isEmpty { oldestPendingSince = .distantPast }
            states = []
            history = []
            historyAtOnce = false
            chat = []
            runs = []
            journaledIDs = []
            scheduleCommits = []
            memoryWrites = []
            workflowCommits = []
            committedEvents = []
            runWaiters = []
            return batch
        }
    }

    /// What the writer took for one transaction.
    struct Batch {
        var events: [PendingEvents.Chunk]
        var states: [(process: String, data: [UInt8], done: (@Sendable (Bool) -> Void)?)]
        var history: [HistoryEntry]
        var chat: [ChatWrite]
        var runs: [TaskRun]
        var schedules: [(change: ScheduleCommit, done: @Sendable (Bool) -> Void)]
        var memory: [(write: MemoryWrite, done: @Sendable (Result<MemoryEntry?, MemoryError>) -> Void)]
        var workflows: [(change: WorkflowCommit, done: @Sendable (WorkflowCommitOutcome) -> Void)]
        var committedEvents: [(event: PendingEvent, done: @Sendable (Bool) -> Void)]
        var runWaiters: [RunWaiter]
        var journaled: UInt64
        var journaledIDs: [String]

        var isEmpty: Bool {
            events.isEmpty && states.isEmpty && history.isEmpty && chat.isEmpty && runs.isEmpty && schedules.isEmpty
                && memory.isEmpty && workflows.isEmpty && committedEvents.isEmpty && runWaiters.isEmpty
        }
    }

    /// Told whether the changes of task run `id` handed over before it are written, or kept in
    /// the run journal where a kill does not lose them.
    struct RunWaiter {
        var id: String
        var done: @Sendable (Bool) -> Void
    }
}

extension AgentStore {
    /// Whether a change of an acknowledged run handed over now would be kept where a kill does
    /// not lose it: the store writes, or its run journal has room for a change of 256 KiB.
    /// Whether the store writes (it has not failed since its last write): what a flush waited
    /// for is then in the database, not only kept.
    package var writesNow: Bool { queued.withLock { $0.stats.degraded == nil } }

    package var keepsChangesNow: Bool {
        writesNow || runJournal.keeps(bytes: 256 << 10)
    }
}
