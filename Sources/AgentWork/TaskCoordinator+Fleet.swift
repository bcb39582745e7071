import AgentLoop
import AgentSupervision
import Foundation
import Logging

/// The coordinator's side of a fleet's shared queue (loop thread only).
@LoopActor
package final class SharedQueueState {
    /// This agent's id: the holder of its claims.
    package let holder: String
    /// Seconds a claim holds without renewal.
    package let lease: Double
    /// Seconds between claims when no wakeup came.
    package let poll: Double
    package var claiming = false
    /// A wakeup came while a claim was in flight: claim again after it.
    package var again = false
    package var pollTimer: Int?
    /// A claim at the moment another holder's lease lapses (``TaskCoordinator/watchLapses(_:)``).
    package var lapseTimer: Int?
    package var lapseAsked = false
    package var renewTimer: Int?
    package var renewing = false
    /// Runs submitted here and waited for (`--wait`) that another agent may carry out.
    package var watched = Set<String>()
    package var watchTimer: Int?
    /// When a failing claim was last logged (one line per minute at most).
    package var lastClaimError = 0.0
    /// Seconds a run queued here waits for the agent its strategy chose (0: no choice made).
    package let hold: Double
    /// The strategies' choice among the fleet's agents.
    package var assigner = FleetAssigner()
    /// The fleet's database has answered (``TaskCoordinator/fleetJoined()``): claims begin then.
    package var joined = false

    package init(holder: String, lease: Double, poll: Double, hold: Double = 0) {
        self.holder = holder
        self.lease = lease
        self.poll = poll
        self.hold = hold
    }
}

/// A fleet's shared queue: runs are queued in the shared store (where a NOTIFY wakes the
/// agents), and each agent claims what it has room for — runs of tasks it has a runner for,
/// up to each task's `max_concurrent` — when woken, every `poll` seconds, and when an
/// attempt ends. Its claims are renewed every third of the lease; a claim found lost (the
/// agent was presumed dead and the run rescued elsewhere) ends the local attempt, whose late
/// result the store refuses by its fencing token. A run waiting for a retry goes back to the
/// queue, for any agent.
extension TaskCoordinator {
    /// Turns the shared queue on (once, at the start, before any run).
    package func joinFleet(holder: String, lease: Double, poll: Double, hold: Double = 0) {
        shared = SharedQueueState(holder: holder, lease: lease, poll: poll, hold: hold)
        armPoll()
        armRenewal()
    }

    /// The fleet's database answered: claims begin.
    package func fleetJoined() {
        shared?.joined = true
        claimShared()
    }

    /// A wakeup from the store (any thread posts it to the loop): runs may wait.
    package func fleetWakeup() { claimShared() }

    /// The fleet's agents as the database has them now (read after each heartbeat).
    package func fleetMembersRead(_ members: [FleetMember]) {
        shared?.assigner.update(members)
    }

    /// The most label sets a task's room tells in the heartbeat.
    static let mostLabelSetsTold = 32

    /// The tasks this agent carries out, for its heartbeat: the other agents' strategies
    /// choose by them.
    package var fleetTaskRooms: [String: FleetMember.TaskRoom] {
        var rooms: [String: FleetMember.TaskRoom] = [:]
        for (name, definition) in definitions where runner(for: definition.type) != nil {
            let labels = pool.isTaken(name) ? pool.labelSets(for: name, carrying: definition.require) : []
            // Taken by executors none of which carries the task's own labels: never claimed here.
            if pool.isTaken(name), labels.isEmpty { continue }
            // Many sets (executors labelled one by one) would pass the heartbeat's bound:
            // not told then, which lets any run be offered here.
            var room = FleetMember.TaskRoom(running: runningCount[name] ?? 0, maxConcurrent: definition.maxConcurrent,
                                            labels: labels.count <= Self.mostLabelSetsTold ? labels : nil)
            for index in pool.takersOf(name) {
                let member = pool.members[index]
                if let slot = member.slotOf[name] { room.priorityBoost = max(room.priorityBoost, member.slotBoost[slot]) }
                if let preference = member.definition.priorityPreference, !room.preferences.contains(preference) { room.preferences.append(preference) }
            }
            rooms[name] = room
        }
        return rooms
    }

    package func submitShared(_ run: TaskRun) -> TaskRun {
        var run = run
        guard definitions[run.task] != nil else {
            var failed = run
            failed.status = .failed
            failed.error = "the task \"\(run.task)\" is no longer in the settings"
            failed.endedAt = Date().timeIntervalSince1970
            remember(failed)
            record(failed, event: .taskFailed)
            return failed
        }
        // The task's strategy names the agent that claims it at once; the others wait for the hold.
        if let shared, shared.hold > 0, run.assignedAgent == nil,
           let agent = shared.assigner.choose(task: run.task, priority: run.priority, require: run.require, strategy: strategy(for: run.task)) {
            run.assignedAgent = agent
            run.assignmentHold = shared.hold
        }
        record(run, event: .taskQueued)
        claimShared()
        return run
    }

    /// Claims what this agent has room for (one claim in flight at a time).
    package func claimShared() {
        guard let shared, shared.joined, !stopping, let store else { return }
        if shared.claiming {
            shared.again = true
            return
        }
        var room: [String: Int] = [:]
        var labels: [String: [[String: String]]] = [:]
        let now = Date().timeIntervalSince1970
        for (name, definition) in definitions where runner(for: definition.type) != nil {
            var free = definition.maxConcurrent - (runningCount[name] ?? 0)
            if pool.isTaken(name) {
                // Taken by declared executors: as many as they have room for, of the runs whose
                // labels one of those carrying the task's own carries.
                let sets = pool.labelSets(for: name, carrying: definition.require)
                guard !sets.isEmpty else { continue }
                labels[name] = sets
                free = min(free, pool.room(for: name, now: now))
            }
            if free > 0 { room[name] = free }
        }
        guard !room.isEmpty else { return }
        shared.claiming = true
        shared.again = false
        let request = ClaimRequest(holder: shared.holder, room: room, lease: shared.lease, labels: labels, excluding: Set(active.keys))
        let inbox = loop.inbox
        Task.detached {
            let result = await Result { try await store.claim(request) }
            inbox.post {
                let coordinator = self
                guard let shared = coordinator.shared else { return }
                shared.claiming = false
                switch result {
                case .success(let claimed):
                    coordinator.adopt(claimed)
                    if !claimed.isEmpty || shared.again {
                        coordinator.claimShared()
                    } else {
                        coordinator.watchLapses(Array(request.room.keys))
                    }
                case .failure(let error):
                    let now = Date().timeIntervalSince1970
                    if now - shared.lastClaimError > 60 {
                        shared.lastClaimError = now
                        coordinator.logger.warning("fleet: cannot claim runs from the shared queue: \(error) (trying again every \(ProcessPolicy.format(shared.poll)) s)")
                    }
                }
            }
        }
    }

    /// Nothing to claim while there is room: if another agent holds runs of these tasks, claim
    /// again when the first of its leases lapses (a dead agent's runs resume then; a live one
    /// renews, and the next check looks at the renewed lease). Sooner than the poll only.
    package func watchLapses(_ tasks: [String]) {
        guard let shared, let store, !stopping, shared.lapseTimer == nil, !shared.lapseAsked else { return }
        shared.lapseAsked = true
        let holder = shared.holder
        let inbox = loop.inbox
        Task.detached {
            let left = try? await store.nextLapse(tasks: tasks, holder: holder)
            inbox.post {
                let coordinator = self
                guard let shared = coordinator.shared, !coordinator.stopping else { return }
                shared.lapseAsked = false
                guard let left = left ?? nil, left < shared.poll, shared.lapseTimer == nil else { return }
                // A little after the lapse: the server compares with its own clock.
                shared.lapseTimer = coordinator.loop.schedule(after: left + 0.01) { [weak coordinator] in
                    guard let coordinator else { return }
                    coordinator.shared?.lapseTimer = nil
                    coordinator.claimShared()
                }
            }
        }
    }

    private func armPoll() {
        guard let shared, !stopping else { return }
        shared.pollTimer = loop.schedule(after: shared.poll) { [weak self] in
            guard let self else { return }
            claimShared()
            armPoll()
        }
    }

    private func armRenewal() {
        guard let shared, !stopping else { return }
        shared.renewTimer = loop.schedule(after: shared.lease / 3) { [weak self] in
            guard let self else { return }
            renewClaims()
            armRenewal()
        }
    }

    /// Extends the leases of the runs going here; ends those whose claim passed to another.
    private func renewClaims() {
        guard let shared, !shared.renewing, let store else { return }
        let claims = active.keys.compactMap { runs[$0]?.claim }
        guard !claims.isEmpty else { return }
        shared.renewing = true
        let inbox = loop.inbox
        let lease = shared.lease
        Task.detached {
            let held = try? await store.renew(claims, lease: lease)
            inbox.post {
                let coordinator = self
                coordinator.shared?.renewing = false
                // The database away: nothing is known; the leases may lapse, and then results are refused.
                guard let held else { return }
                for claim in claims where !held.contains(claim.runID) {
                    guard let attempt = coordinator.active[claim.runID] else { continue }
                    coordinator.logger.warning("fleet: run \(claim.runID) (\(attempt.definition.name)) was taken over by another agent (this agent's lease lapsed): ending it here")
                    coordinator.release(claim.runID)
                    attempt.runner.cancel(runID: claim.runID, reason: .interrupted)
                }
            }
        }
    }

    /// Follows a run another agent may carry out, for whoever waits for its end.
    package func watchSharedRun(_ id: String) {
        guard let shared else { return }
        shared.watched.insert(id)
        guard shared.watchTimer == nil else { return }
        shared.watchTimer = loop.schedule(after: 0.25) { [weak self] in self?.checkWatched() }
    }

    private func checkWatched() {
        guard let shared, let store else { return }
        shared.watchTimer = nil
        let ids = shared.watched.filter { waiters[$0] != nil }
        shared.watched = ids
        guard !ids.isEmpty else { return }
        let inbox = loop.inbox
        Task.detached {
            var finished: [TaskRun] = []
            for id in ids {
                if let run = try? await store.run(id: id), run.status.isFinished { finished.append(run) }
            }
            let ended = finished
            inbox.post {
                let coordinator = self
                for run in ended {
                    coordinator.shared?.watched.remove(run.id)
                    coordinator.remember(run)
                    for done in coordinator.waiters.removeValue(forKey: run.id) ?? [] { done(run) }
                }
                guard let shared = coordinator.shared, !shared.watched.isEmpty, shared.watchTimer == nil else { return }
                shared.watchTimer = coordinator.loop.schedule(after: 0.25) { [weak coordinator] in coordinator?.checkWatched() }
            }
        }
    }
}
