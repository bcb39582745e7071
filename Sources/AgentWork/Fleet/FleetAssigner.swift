/// Chooses the agent of the fleet for a run queued through this agent, by the task's
/// assignment strategy (``AssignmentStrategy``), among the agents alive that carry the task
/// out — as their heartbeats last told (re-read every heartbeat), plus the runs this agent
/// gave each since.
///
/// Every agent decides for the runs queued through it: no agent decides for the fleet (no
/// single point of failure), and nothing waits for a decision. The choice is a preference the
/// store holds for a short time (``FleetSettings/assignmentHold``): the chosen agent claims
/// the run at once; if it does not (lost meanwhile, or full), any agent with room takes it
/// after the hold.
package struct FleetAssigner {
    /// The agents alive, by id.
    package private(set) var members: [FleetMember] = []
    /// Runs given since the members were read, by agent and task: the heartbeats' counts lag.
    private var given: [String: [String: Int]] = [:]
    /// Runs given over the agent's life, by agent (the last tie-break).
    private var total: [String: Int] = [:]
    /// Round robin: per task, the agent chosen last.
    private var last: [String: String] = [:]

    /// Takes the members as read now (the lost ones left out).
    package mutating func update(_ members: [FleetMember]) {
        self.members = members.filter { !$0.isLost }.sorted { $0.agentID < $1.agentID }
        given = [:]
    }

    /// The agent for a run of `task` requiring `require`, or nil when no agent alive is known to
    /// carry it out (then no agent is preferred): one whose executors lack the labels would
    /// never claim it, and the run waited for the hold. An agent with room is preferred; when all are full, the
    /// strategy's choice among all (the run waits for it to have room, or for the hold's end).
    package mutating func choose(task: String, priority: TaskRun.Priority, require: [String: String] = [:], strategy: AssignmentStrategy) -> String? {
        var candidates: [(id: String, room: FleetMember.TaskRoom)] = []
        for member in members {
            guard var room = member.tasks[task], room.maxConcurrent > 0, room.carries(require) else { continue }
            room.running += given[member.agentID]?[task] ?? 0
            candidates.append((member.agentID, room))
        }
        guard !candidates.isEmpty else { return nil }
        let open = candidates.filter { $0.room.running < $0.room.maxConcurrent }
        let pool = open.isEmpty ? candidates : open
        let chosen: String
        switch strategy {
        case .roundRobin:
            // The next agent after the last chosen, in id order, so that agents joining or
            // leaving do not restart the turn.
            let after = last[task].flatMap { previous in pool.first { $0.id > previous } } ?? pool[0]
            chosen = after.id
            last[task] = chosen
        case .bestFit, .loadBalanced, .priorityFirst:
            var best = pool[0]
            for candidate in pool.dropFirst() where better(candidate, than: best, rank: priority, strategy: strategy) {
                best = candidate
            }
            chosen = best.id
        }
        given[chosen, default: [:]][task, default: 0] += 1
        total[chosen, default: 0] += 1
        return chosen
    }

    /// As ``ExecutorPool``'s strategies: a higher score first (best_fit: the boost, plus 1 for
    /// a preference of the run's priority; priority_first: the preference, then the boost),
    /// then the lower load (running / max_concurrent), then fewer runs given by this agent.
    private func better(_ a: (id: String, room: FleetMember.TaskRoom), than b: (id: String, room: FleetMember.TaskRoom),
                        rank: TaskRun.Priority, strategy: AssignmentStrategy) -> Bool {
        func score(_ room: FleetMember.TaskRoom) -> (Int, Int) {
            let match = room.preferences.contains(rank) ? 1 : 0
            return switch strategy {
            case .bestFit: (room.priorityBoost + match, 0)
            case .priorityFirst: (match, room.priorityBoost)
            case .loadBalanced, .roundRobin: (0, 0)
            }
        }
        let (left, right) = (score(a.room), score(b.room))
        if left != right { return left > right }
        // Doubles: the figures come from other agents' heartbeats, and a product could overflow.
        let loadA = Double(a.room.running) / Double(a.room.maxConcurrent), loadB = Double(b.room.running) / Double(b.room.maxConcurrent)
        if loadA != loadB { return loadA < loadB }
        return total[a.id, default: 0] < total[b.id, default: 0]
    }
}
