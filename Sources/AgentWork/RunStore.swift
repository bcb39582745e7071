import AgentBase
/// Where task runs are kept: the embedded SQLite store (``SQLiteRunStore``) for one agent, or
/// PostgreSQL shared by a fleet (`PostgresRunStore` in AgentFleet). Both pass one conformance
/// suite (`StoreContract.runs`, `.claims`, `.assignedRuns` in Tests/AgentStoreConformance).
///
/// The supervisor's loop never waits on it: ``record(_:)`` hands a change to a writer and
/// returns at once (fire-and-forget, with a bounded, counted backlog), and every read is
/// `async`, awaited off the loop (its answer posted back to the loop's inbox).
///
/// Two ways to use it:
/// - one agent owns its runs (the default): it keeps its queue in memory and ``record(_:)``s
///   every change; ``loadUnfinished()`` gives the queue back at the next start;
/// - a fleet shares one queue: an agent ``record(_:)``s a new run as queued, and any agent
///   takes runs with ``claim(_:)``, each with a lease and a fencing token (``RunClaim``). The
///   holder's later changes carry the claim (``TaskRun/claim``) and are written only while it
///   is still the run's claim; a run whose lease lapsed (its holder died) is claimable again,
///   with the next attempt and the same idempotency key (the run id).
package protocol RunStore: AnyObject, Sendable {
    /// Records a run's new state (insert or replace by id). Never blocks. A change carrying a
    /// ``TaskRun/claim`` is written only if that claim still holds the run (else refused,
    /// counted in ``refusedWrites``).
    func record(_ run: TaskRun)
    /// Every run not finished (queued, running, retrying), oldest first: the queue at start.
    func loadUnfinished() async throws -> [TaskRun]
    /// Runs matching `filter`, newest first, as a list shows them: a store may leave out
    /// their long members and name them (see ``RunListing``).
    func list(_ filter: RunFilter) async throws -> RunListPage<TaskRun>
    /// One run by id.
    func run(id: String) async throws -> TaskRun?
    /// The attempts kept of run `runID` (in no particular order; none for an unknown run), each
    /// as written with the run (``TaskRun/attemptRecord``): the first and the newest of at most
    /// ``TaskAttempt/keptAttempts``, the newest ``TaskAttempt/keptTails`` with their tails.
    /// ``TaskAttempt/shown(_:of:)`` completes them with the run's record. They go with their run.
    func attempts(of runID: String) async throws -> [TaskAttempt]
    /// Deletes finished runs that ended before `endedBefore` (nil: no age limit) and all but the
    /// newest `keeping` finished runs (nil: no count limit). Returns how many went.
    @discardableResult
    func prune(endedBefore: Double?, keeping: Int?) async throws -> Int

    /// Takes the best runs that are due, at most `room[task]` of each task: queued or retrying
    /// runs whose time has come, and running runs whose lease lapsed. Best: higher priority,
    /// then the earlier due time (not-before, next attempt, else arrival), then the earlier
    /// arrival. Each comes back `running`, its attempt one higher, with its ``TaskRun/claim``.
    /// Runs another holder is claiming at the same time are skipped, never waited for. A run
    /// whose ``TaskRun/assignedAgent`` is another holder waits for it alone until its hold ends
    /// (``TaskRun/assignmentHoldUntil``); once claimed, its hold is spent (a retry goes to any).
    /// Each claimed run's ``TaskRun/agent`` is the holder.
    func claim(_ request: ClaimRequest) async throws -> [TaskRun]
    /// Extends the leases of `claims` (all held by one holder) by `lease` seconds. Returns the
    /// ids of the runs still held; a run missing from it was rescued by another holder: its
    /// results will be refused.
    func renew(_ claims: [RunClaim], lease: Double) async throws -> Set<String>
    /// Seconds until the first lease of a run of `tasks` held by another holder than `holder`
    /// lapses (0 when one has lapsed already; nil when none is held by another): no wakeup
    /// comes when a lease lapses, so an agent with room claims then rather than at its next
    /// poll — a dead agent's runs resume within the lease, not the lease plus a poll. The end
    /// of a hold of a queued run assigned to another agent counts as well (nil: none comes).
    func nextLapse(tasks: [String], holder: String) async throws -> Double?
    /// Writes `run` (its record, cancelled) if it is still queued or waiting for a retry in a
    /// shared queue, no holder having claimed it: whether it was. A store whose runs are all in
    /// the agent's memory (not shared) has none to cancel here.
    func cancelQueued(_ run: TaskRun) async throws -> Bool
    /// Writes a claimed run's change now: true if written, false if the claim no longer holds
    /// the run (a stale holder). What ``record(_:)`` does in the background, awaited.
    func settle(_ run: TaskRun) async throws -> Bool
    /// Waits for the writes handed to ``record(_:)`` so far to be written (or dropped).
    func flush() async
    /// Writes new runs a request asked for now, in one transaction, then calls `done` (on any
    /// thread) with whether they were written: the request is answered only once they are, and
    /// refused when the store cannot write (they are not kept to write later, unlike the
    /// changes given to ``record(_:)``). The caller queues them only once written.
    func commitNew(_ runs: [TaskRun], done: @escaping @Sendable (Bool) -> Void)
    /// Makes a new run a request asked for durable at once, on the caller's thread, if this
    /// store can (SQLite's run journal): true when it is, and its change is recorded as
    /// ``record(_:)`` does, so the caller queues it and answers now; false when the caller is
    /// to wait for ``commitNew(_:done:)``.
    func journalNew(_ run: TaskRun) -> Bool
    /// Changes ``record(_:)`` refused since the start: written by a holder that lost its claim.
    var refusedWrites: Int { get }
    /// Whether a change handed to ``record(_:)`` now would be written or kept where a kill
    /// does not lose it (SQLite's run journal on a full disk): a person's answer or a cancel
    /// is refused while it would not.
    var keepsChangesNow: Bool { get }
    /// Whether the store writes now (false while it fails, e.g. on a full disk): what
    /// ``flush()`` waited for is then written, not only kept to write later.
    var writesNow: Bool { get }
    /// Calls `done` (on any thread) once the changes of run `runID` handed to ``record(_:)``
    /// so far are written, or kept where a kill does not lose them (true), or neither (false).
    func whenKept(_ runID: String, done: @escaping @Sendable (Bool) -> Void)
}

extension RunStore {
    /// By default: none (the runs are all in the agent's memory).
    package func cancelQueued(_ run: TaskRun) async throws -> Bool { false }

    /// By default: handed to ``record(_:)`` and awaited (the fleet's store keeps a backlog of
    /// its own).
    package func commitNew(_ runs: [TaskRun], done: @escaping @Sendable (Bool) -> Void) {
        for run in runs { record(run) }
        Task {
            await flush()
            done(true)
        }
    }

    /// By default: no journal.
    package func journalNew(_ run: TaskRun) -> Bool { false }

    /// By default: yes. The fleet's store keeps what waits for its database in memory, as it
    /// keeps every change while the database is away (a kill loses those: docs/fleet.md); a
    /// person's answer is not refused for it.
    package var keepsChangesNow: Bool { true }

    /// By default: yes (the fleet's ``flush()`` waits for its database's answer).
    package var writesNow: Bool { true }

    /// By default: at once, true (as ``keepsChangesNow``).
    package func whenKept(_ runID: String, done: @escaping @Sendable (Bool) -> Void) { done(true) }
}

/// What ``RunStore/claim(_:)`` may take.
package struct ClaimRequest: Sendable, Equatable {
    /// Who claims (a fleet agent's id).
    package var holder: String
    /// How many runs of each task the holder has room for.
    package var room: [String: Int]
    /// Seconds the claim holds without a renewal.
    package var lease: Double
    /// Per task, the label sets of the holder's executors taking it: a run that requires labels
    /// (`require`) is claimed only when one set carries them all. A task not here runs on its
    /// implicit executor: only runs requiring no label are claimed.
    package var labels: [String: [[String: String]]]
    /// Runs not to claim: the holder's own, still running here or with a change not yet
    /// written. After an outage longer than the lease the holder claimed its own lapsed runs
    /// again — those it had finished meanwhile, whose end its fenced write then lost, ran again.
    package var excluding: Set<String>

    package init(holder: String, room: [String: Int], lease: Double, labels: [String: [[String: String]]] = [:], excluding: Set<String> = []) {
        self.holder = holder
        self.room = room
        self.lease = lease
        self.labels = labels
        self.excluding = excluding
    }

    /// Whether a run of `task` requiring `require` may be claimed by this request's holder.
    package func allows(task: String, require: [String: String]) -> Bool {
        require.isEmpty || (labels[task] ?? []).contains { set in require.allSatisfy { set[$0.key] == $0.value } }
    }
}

/// A holder's hold on a run: the fencing token orders every claim of the run, so that a
/// result from an older claim (a holder that was presumed dead) is refused.
public struct RunClaim: Sendable, Equatable, Hashable {
    public var runID: String
    public var holder: String
    /// Higher for every new claim (of any run).
    public var fence: Int64
    /// When the lease lapses unless renewed (seconds since the epoch, the store's clock).
    public var leaseUntil: Double

    public init(runID: String, holder: String, fence: Int64, leaseUntil: Double) {
        self.runID = runID
        self.holder = holder
        self.fence = fence
        self.leaseUntil = leaseUntil
    }
}

/// Which runs `task runs` lists.
package struct RunFilter: Sendable, Equatable {
    package var task: String?
    package var status: TaskRun.Status?
    package var limit: Int = 100

    package init(task: String? = nil, status: TaskRun.Status? = nil, limit: Int = 100) {
        self.task = task
        self.status = status
        self.limit = limit
    }

    /// Whether `run` passes the filter (the limit aside).
    package func matches(_ run: TaskRun) -> Bool {
        (task == nil || run.task == task) && (status == nil || run.status == status)
    }
}
