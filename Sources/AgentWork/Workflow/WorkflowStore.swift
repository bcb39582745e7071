import Foundation

/// Where workflow runs and their step logs are kept: the embedded SQLite store
/// (``SQLiteWorkflowStore``) for one agent, or PostgreSQL shared by a fleet
/// (`PostgresWorkflowStore` in AgentFleet, a ``SharedWorkflowStore``). Both pass one
/// conformance suite (`StoreContract.workflows`, `.sharedWorkflows`). Kept narrow, next to ``RunStore`` and
/// ``ScheduleStore``: no SQL in the engine.
///
/// ``commit(_:done:)`` is called on the loop and returns at once; the engine starts a step's
/// effect only once its start is committed, and the next step only once a step's result is.
/// Reads are `async`, awaited off the loop.
package protocol WorkflowStore: AnyObject, Sendable {
    /// Commits `change` in one transaction (after what was handed over before), then calls
    /// `done` (on any thread) with what became of it.
    func commit(_ change: WorkflowCommit, done: @escaping @Sendable (WorkflowCommitOutcome) -> Void)
    /// See the extension's default.
    var keepsChangesNow: Bool { get }
    /// Every unfinished run with its whole step log (oldest first): what resumes at start.
    func loadUnfinished() async throws -> [(run: WorkflowRun, steps: [WorkflowStepRecord])]
    /// Runs matching `filter`, newest first (without their steps), as a list shows them: a
    /// store may leave out their long members and name them (see ``RunListing``).
    func list(_ filter: WorkflowRunFilter) async throws -> RunListPage<WorkflowRun>
    /// One run with its step log, in the order the steps started.
    func run(id: String) async throws -> (run: WorkflowRun, steps: [WorkflowStepRecord])?
    /// Deletes finished runs, with their step logs, that ended before `endedBefore` (nil: no age
    /// limit) and all but the newest `keeping` finished runs (nil: no count limit); unfinished
    /// runs stay. Returns how many runs went.
    @discardableResult
    func prune(endedBefore: Double?, keeping: Int?) async throws -> Int
}

extension WorkflowStore {
    /// Whether a change of an acknowledged run handed over now is kept, written or held where a
    /// kill does not lose it (a store that cannot write keeps it only while its journal has
    /// room): a person's signal or decision is refused while it would not be. Stores that
    /// write or fail the change as a whole: always.
    package var keepsChangesNow: Bool { true }
}

/// A workflow store shared by the agents of a fleet: each unfinished run is held by one agent
/// under a lease with a fencing token (``WorkflowRun/claim``), as task runs are. A commit made
/// under a claim that no longer holds the run (its lease lapsed and another agent took it) is
/// refused whole; a run whose lease lapsed is taken by another agent, which resumes it from
/// its step log.
package protocol SharedWorkflowStore: WorkflowStore {
    /// A fencing token for the runs `holder` starts in this life of the agent (higher than any
    /// given before): a new run is written under it, with a lease of its own.
    func startToken(holder: String) async throws -> Int64
    /// Takes at most `limit` unfinished runs whose lease lapsed, and those `holder` held in an
    /// earlier life (a token below `token`), each with a new fencing token and a lease of
    /// `lease` seconds, with their step logs (oldest run first). Runs another agent is taking
    /// at the same time are skipped, never waited for.
    func claim(holder: String, token: Int64, lease: Double, limit: Int) async throws -> [(run: WorkflowRun, steps: [WorkflowStepRecord])]
    /// Extends the leases of `claims` (one holder's) by `lease` seconds; returns the ids of the
    /// runs still held (one missing was taken over: its commits will be refused).
    func renew(_ claims: [RunClaim], lease: Double) async throws -> Set<String>
}

/// What became of a ``WorkflowCommit``.
package enum WorkflowCommitOutcome: Sendable, Equatable {
    case written
    /// The store could not write it (the engine goes on in memory).
    case failed
    /// The store could not write it now but keeps it where a kill does not lose it (its run
    /// journal, on a full disk): written once it can, or at the next start.
    case kept
    /// Made under a claim that no longer holds the run: another agent has it now.
    case refused
}

/// What one change of the engine writes together.
package struct WorkflowCommit: Sendable {
    package var runs: [WorkflowRun] = []
    package var steps: [WorkflowStepRecord] = []
    /// The claim it is made under (a fleet's shared store): written only while that claim
    /// holds the run. Nil: this agent owns its runs.
    package var claim: RunClaim?
    /// Whether the store keeps it to write later when it cannot write it now (a change of a run
    /// already acknowledged), or lets it go (the first write of a run a request asked for: the
    /// request is refused instead, so no run appears that nobody was told about).
    package var keepIfUnwritten = true
    /// The runs among `runs` whose first record the store has not written yet (begun while it
    /// could not write): a change kept in the run journal carries their definition and input,
    /// so that the next open can make them.
    package var unstored: Set<String> = []

    package init(runs: [WorkflowRun] = [], steps: [WorkflowStepRecord] = [], claim: RunClaim? = nil, keepIfUnwritten: Bool = true,
                 unstored: Set<String> = []) {
        self.runs = runs
        self.steps = steps
        self.claim = claim
        self.keepIfUnwritten = keepIfUnwritten
        self.unstored = unstored
    }
}

/// Which runs `workflow runs` lists.
package struct WorkflowRunFilter: Sendable, Equatable {
    package var workflow: String?
    package var status: WorkflowRun.Status?
    package var limit = 100

    package init(workflow: String? = nil, status: WorkflowRun.Status? = nil, limit: Int = 100) {
        self.workflow = workflow
        self.status = status
        self.limit = limit
    }

    package func matches(_ run: WorkflowRun) -> Bool {
        (workflow == nil || run.workflow == workflow) && (status == nil || run.status == status)
    }
}
