import AgentLoop
import AgentSupervision
import Foundation

/// The engine's side of a fleet's shared workflow store (loop thread only).
@LoopActor
package final class FleetWorkflowState {
    package let store: any SharedWorkflowStore
    /// This agent's id: the holder of its runs.
    package let holder: String
    /// The fencing token of the runs this agent starts in this life.
    package let token: Int64
    package let lease: Double
    /// Seconds between looks for runs whose lease lapsed.
    package let poll: Double
    package var claiming = false
    package var renewing = false
    package var claimTimer: Int?
    package var renewTimer: Int?
    /// When a failing claim was last logged (one line per minute at most).
    package var lastClaimError = 0.0

    package init(store: any SharedWorkflowStore, holder: String, token: Int64, lease: Double, poll: Double) {
        self.store = store
        self.holder = holder
        self.token = token
        self.lease = lease
        self.poll = poll
    }
}

/// Workflow runs in a fleet: each run is held by the agent that started it (or took it over)
/// under a lease with a fencing token, renewed every third of the lease. Every `poll` seconds
/// an agent takes the runs whose lease lapsed (their agent died or was cut off) and resumes
/// them from their step logs: steps whose results were committed are not done again, a step in
/// flight goes on with the same idempotency key (its task run is the shared queue's, rescued
/// there if its holder died). A stale holder's commits are refused by the store; it lets the
/// run go when it learns of it (a refused commit, a renewal that no longer holds).
extension WorkflowEngine {
    /// Turns the shared store on (at the start, before any run), and takes at once the runs
    /// whose lease lapsed and those this agent held in an earlier life.
    package func joinFleet(_ state: FleetWorkflowState) {
        fleet = state
        awaitsFleet = false
        claimLapsed()
        armRenewal()
    }

    private func armClaim() {
        guard let fleet, !stopping, fleet.claimTimer == nil else { return }
        fleet.claimTimer = loop.schedule(after: fleet.poll) { [weak self] in
            guard let self else { return }
            self.fleet?.claimTimer = nil
            claimLapsed()
        }
    }

    private func armRenewal() {
        guard let fleet, !stopping else { return }
        fleet.renewTimer = loop.schedule(after: fleet.lease / 3) { [weak self] in
            guard let self else { return }
            renewClaims()
            armRenewal()
        }
    }

    /// Takes runs whose lease lapsed and resumes them here.
    package func claimLapsed() {
        guard let fleet, !stopping, !fleet.claiming else { return }
        fleet.claiming = true
        let store = fleet.store, holder = fleet.holder, token = fleet.token, lease = fleet.lease
        let inbox = loop.inbox
        Task.detached {
            let result = await Result { try await store.claim(holder: holder, token: token, lease: lease, limit: 100) }
            inbox.post {
                let engine = self
                guard let fleet = engine.fleet else { return }
                fleet.claiming = false
                switch result {
                case .success(var taken):
                    guard !taken.isEmpty else { break }
                    // Carried out here from now on.
                    for index in taken.indices { taken[index].0.agent = holder }
                    if engine.stopping { break }
                    for (run, _) in taken {
                        engine.logger.notice("workflow run \(run.id) (\(run.workflow)): taken over (its lease had lapsed), fence \(run.claim?.fence ?? 0); it resumes here from its step log")
                    }
                    // A run this agent still has in memory (its own lease had lapsed, and no one
                    // took it meanwhile): its memory is the newest; only the claim is new.
                    for (run, _) in taken {
                        engine.live[run.id]?.run.claim = run.claim
                        engine.live[run.id]?.run.agent = holder
                    }
                    engine.load(taken)
                    for (run, _) in taken { engine.advance(run.id) }
                case .failure(let error):
                    let now = Date().timeIntervalSince1970
                    if now - fleet.lastClaimError > 60 {
                        fleet.lastClaimError = now
                        engine.logger.warning("fleet: cannot look for workflow runs to take over: \(error) (trying again every \(ProcessPolicy.format(fleet.poll)) s)")
                    }
                }
                engine.armClaim()
            }
        }
    }

    /// Extends the leases of the runs going here; lets go of those another agent took.
    private func renewClaims() {
        guard let fleet, !fleet.renewing else { return }
        // Not those whose first commit is not written yet: the store does not know them.
        let claims = live.values.filter(\.stored).compactMap(\.run.claim)
        guard !claims.isEmpty else { return }
        fleet.renewing = true
        let store = fleet.store, lease = fleet.lease
        let inbox = loop.inbox
        Task.detached {
            let held = try? await store.renew(claims, lease: lease)
            inbox.post {
                let engine = self
                engine.fleet?.renewing = false
                // The database away: nothing is known; the leases may lapse, and then commits are refused.
                guard let held else { return }
                for claim in claims where !held.contains(claim.runID) {
                    guard let state = engine.live[claim.runID], state.run.claim == claim else { continue }
                    engine.letGo(state, reason: "its lease lapsed and another agent holds it")
                }
            }
        }
    }

    /// Forgets a run another agent holds now: its timers and waits end here; its task runs are
    /// the shared queue's and go on there; whoever waited for its end here is told where it stands.
    package func letGo(_ state: LiveRun, reason: String) {
        guard live[state.run.id] === state else { return }
        logger.warning("workflow run \(state.run.id) (\(state.run.workflow)): \(reason); this agent lets it go")
        for timer in state.timers.values { loop.cancel(timer) }
        state.timers = [:]
        for step in state.steps.keys { removeWait(run: state.run.id, step: step) }
        state.heldEvents = [:]
        state.afterCommit = []
        letGoOfInput(state)
        for done in state.waiters { done(state.run, state.log) }
        state.waiters = []
    }
}
