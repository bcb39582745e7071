/// The declared executors of an agent and what each carries now: the state the assignment
/// strategies decide on (``AssignmentStrategy``). A plain value without processes: the
/// ``TaskCoordinator`` keeps one, and tests drive it directly.
///
/// Executors pull: ``choose(task:priority:require:avoid:strategy:now:)`` only ever returns an
/// executor with room for the run (running below its `max_concurrent` overall and for the
/// task), not draining, not offline, carrying every label the run requires. The cost of one
/// decision is one pass over the executors that take the task, without allocation.
package struct ExecutorPool {
    /// What `executor list` shows.
    package enum State: String, CaseIterable, Sendable {
        /// Takes runs (has room).
        case online
        /// Every slot taken; takes runs again when one ends.
        case busy
        /// Finishes what it has and takes nothing new (`executor drain`).
        case draining
        /// Its worker died during a run: held out for a backoff (1 s, doubling to 60 s; reset by
        /// the next run that ends normally).
        case offline
    }

    package struct Member {
        package let definition: ExecutorDefinition
        /// The tasks it takes, one slot each: name, boost, limit, running.
        package let slotTasks: [String]
        package let slotBoost: [Int]
        package let slotLimit: [Int]
        package var slotRunning: [Int]
        package let slotOf: [String: Int]
        package let preferenceRank: Int
        package var running = 0
        package var draining = false
        package var offlineUntil: Double?
        /// Deaths in a row (the backoff's exponent).
        package var crashes = 0
        /// Runs given to it over the agent's life.
        package var assigned = 0

        package init(_ definition: ExecutorDefinition) {
            self.definition = definition
            let names = definition.tasks.keys.sorted()
            slotTasks = names
            slotBoost = names.map { definition.tasks[$0]!.priorityBoost }
            slotLimit = names.map { definition.tasks[$0]!.maxConcurrent ?? Int.max }
            slotRunning = Array(repeating: 0, count: names.count)
            slotOf = Dictionary(uniqueKeysWithValues: names.enumerated().map { ($1, $0) })
            preferenceRank = definition.priorityPreference?.rank ?? -1
        }

        package var name: String { definition.name }
        package var maxConcurrent: Int { definition.maxConcurrent }
    }

    /// Seconds an executor whose worker died stays offline: 1, 2, 4… at most this.
    package static let longestOffline = 60.0

    package private(set) var members: [Member] = []
    private var byName: [String: Int] = [:]
    /// Task → (member, slot) of each executor taking it, in declaration order.
    private var takers: [String: [(member: Int, slot: Int)]] = [:]
    /// Round robin: per task, the position in `takers` to try first.
    private var cursors: [String: Int] = [:]

    package init(_ definitions: [ExecutorDefinition] = []) {
        update(definitions)
    }

    package var isEmpty: Bool { members.isEmpty }

    /// Takes new definitions (a reload): an executor keeping its name keeps its running
    /// counts, its drain and its offline time.
    package mutating func update(_ definitions: [ExecutorDefinition]) {
        let old = members
        let oldIndex = byName
        members = []
        byName = [:]
        takers = [:]
        for definition in definitions where byName[definition.name] == nil {
            var member = Member(definition)
            if let previous = oldIndex[definition.name].map({ old[$0] }) {
                member.running = previous.running
                member.draining = previous.draining
                member.offlineUntil = previous.offlineUntil
                member.crashes = previous.crashes
                member.assigned = previous.assigned
                for (slot, task) in member.slotTasks.enumerated() {
                    if let oldSlot = previous.slotOf[task] { member.slotRunning[slot] = previous.slotRunning[oldSlot] }
                }
            }
            byName[definition.name] = members.count
            for (slot, task) in member.slotTasks.enumerated() {
                takers[task, default: []].append((members.count, slot))
            }
            members.append(member)
        }
        cursors = cursors.filter { takers[$0.key] != nil }
    }

    package func index(of name: String) -> Int? { byName[name] }

    /// Whether any executor takes `task` (if none does, the task keeps its implicit executor).
    package func isTaken(_ task: String) -> Bool { takers[task] != nil }

    /// The executors that take `task`.
    package func takersOf(_ task: String) -> [Int] { takers[task]?.map(\.member) ?? [] }

    package func state(of member: Int, now: Double) -> State {
        let m = members[member]
        if m.draining { return .draining }
        if let until = m.offlineUntil, until > now { return .offline }
        return m.running >= m.maxConcurrent ? .busy : .online
    }

    /// Whether `member` may take a run of `task` now (room, not draining or offline, labels).
    package func canTake(_ member: Int, task: String, require: [String: String] = [:], now: Double) -> Bool {
        let m = members[member]
        guard let slot = m.slotOf[task] else { return false }
        return eligible(m, slot: slot, require: require, now: now)
    }

    @inline(__always)
    private func eligible(_ m: Member, slot: Int, require: [String: String], now: Double) -> Bool {
        guard !m.draining, m.running < m.maxConcurrent, m.slotRunning[slot] < m.slotLimit[slot] else { return false }
        if let until = m.offlineUntil, until > now { return false }
        if !require.isEmpty {
            for (key, value) in require where m.definition.labels[key] != value { return false }
        }
        return true
    }

    /// How many more runs of `task` its executors can take now (a fleet agent claims no more).
    package func room(for task: String, now: Double) -> Int {
        var room = 0
        for (member, slot) in takers[task] ?? [] {
            let m = members[member]
            guard eligible(m, slot: slot, require: [:], now: now) else { continue }
            let free = min(m.maxConcurrent - m.running, m.slotLimit[slot] == Int.max ? Int.max : m.slotLimit[slot] - m.slotRunning[slot])
            room = room > Int.max - free ? Int.max : room + free
        }
        return room
    }

    /// The label sets of the executors taking `task` that carry `require` (the task's own), each
    /// once: a run whose labels one of them carries can run here.
    package func labelSets(for task: String, carrying require: [String: String]) -> [[String: String]] {
        var sets: [[String: String]] = []
        for member in takersOf(task) where carries(member, require) {
            let labels = members[member].definition.labels
            if !sets.contains(labels) { sets.append(labels) }
        }
        return sets
    }

    /// Whether every label of `require` is on `member`.
    package func carries(_ member: Int, _ require: [String: String]) -> Bool {
        require.allSatisfy { members[member].definition.labels[$0.key] == $0.value }
    }

    /// The executor for a run of `task`, by `strategy`, among those with room; nil when none
    /// has room (the run waits). `avoid` (the executor of the run's previous attempt) is taken
    /// only when no other one can.
    package mutating func choose(task: String, priority: TaskRun.Priority, require: [String: String] = [:], avoid: Int? = nil,
                         strategy: AssignmentStrategy, now: Double) -> Int? {
        guard let list = takers[task] else { return nil }
        if let chosen = pick(list, task: task, rank: priority.rank, require: require, avoid: avoid ?? -1, strategy: strategy, now: now) {
            return chosen
        }
        guard let avoid, list.contains(where: { $0.member == avoid }) else { return nil }
        return pick(list, task: task, rank: priority.rank, require: require, avoid: -1, strategy: strategy, now: now)
    }

    private mutating func pick(_ list: [(member: Int, slot: Int)], task: String, rank: Int, require: [String: String], avoid: Int,
                               strategy: AssignmentStrategy, now: Double) -> Int? {
        if strategy == .roundRobin {
            let start = cursors[task] ?? 0
            for step in 0..<list.count {
                let position = (start + step) % list.count
                let (member, slot) = list[position]
                guard member != avoid, eligible(members[member], slot: slot, require: require, now: now) else { continue }
                cursors[task] = position + 1
                return member
            }
            return nil
        }
        var best = -1
        var bestPrimary = Int.min, bestSecondary = Int.min
        for (member, slot) in list where member != avoid {
            let m = members[member]
            guard eligible(m, slot: slot, require: require, now: now) else { continue }
            let match = m.preferenceRank == rank ? 1 : 0
            // Higher first; then the lower load, then fewer runs so far (`better`).
            let (primary, secondary): (Int, Int) = switch strategy {
            case .bestFit: (m.slotBoost[slot] + match, 0)
            case .priorityFirst: (match, m.slotBoost[slot])
            case .loadBalanced, .roundRobin: (0, 0)
            }
            if best < 0 || primary > bestPrimary || (primary == bestPrimary && (secondary > bestSecondary
                || (secondary == bestSecondary && lessLoaded(m, than: members[best])))) {
                best = member
                bestPrimary = primary
                bestSecondary = secondary
            }
        }
        return best < 0 ? nil : best
    }

    /// Lower running/max_concurrent (compared without division), then fewer runs given so far.
    @inline(__always)
    private func lessLoaded(_ a: Member, than b: Member) -> Bool {
        let left = a.running * b.maxConcurrent, right = b.running * a.maxConcurrent
        if left != right { return left < right }
        return a.assigned < b.assigned
    }

    /// A run of `task` starts on `member`.
    package mutating func begin(_ member: Int, task: String) {
        guard members.indices.contains(member), let slot = members[member].slotOf[task] else { return }
        members[member].running += 1
        members[member].slotRunning[slot] += 1
        members[member].assigned += 1
    }

    /// A run of `task` on `member` ended; `lost`: the executor's worker died during it (the
    /// executor goes offline for its backoff).
    package mutating func end(_ member: Int, task: String, lost: Bool = false, now: Double) {
        guard members.indices.contains(member), let slot = members[member].slotOf[task] else { return }
        members[member].running = max(members[member].running - 1, 0)
        members[member].slotRunning[slot] = max(members[member].slotRunning[slot] - 1, 0)
        if lost {
            members[member].crashes += 1
            let exponent = Double(min(members[member].crashes - 1, 16))
            members[member].offlineUntil = now + min(Self.longestOffline, pow2(exponent))
        } else {
            members[member].crashes = 0
            members[member].offlineUntil = nil
        }
    }

    /// `executor drain` (true) and `executor resume` (false). Whether the executor exists.
    @discardableResult
    package mutating func setDraining(_ name: String, _ draining: Bool) -> Bool {
        guard let member = byName[name] else { return false }
        members[member].draining = draining
        return true
    }

    private func pow2(_ exponent: Double) -> Double {
        var value = 1.0
        for _ in 0..<Int(exponent) { value *= 2 }
        return value
    }
}
