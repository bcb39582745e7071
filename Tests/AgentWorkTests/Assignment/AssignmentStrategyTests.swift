import AgentTestSupport
@testable import AgentWork
import Testing

/// A seeded generator, so that the fairness scenarios are the same at every run.
struct SplitMix64: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// The strategies on fixed scenarios, without processes (``ExecutorPool``).
@Suite(.ownThreads) struct AssignmentStrategyTests {
    typealias Capability = ExecutorDefinition.Capability

    static func executor(_ name: String, _ tasks: [String: Capability] = ["t": Capability()], max: Int = 4,
                         preference: TaskRun.Priority? = nil, labels: [String: String] = [:]) -> ExecutorDefinition {
        ExecutorDefinition(name: name, tasks: tasks, maxConcurrent: max, priorityPreference: preference, labels: labels)
    }

    /// Fills `member` with `count` runs of `t`.
    static func load(_ pool: inout ExecutorPool, _ name: String, _ count: Int) {
        for _ in 0..<count { pool.begin(pool.index(of: name)!, task: "t") }
    }

    func chosen(_ pool: inout ExecutorPool, _ strategy: AssignmentStrategy, priority: TaskRun.Priority = .normal,
                require: [String: String] = [:], avoid: String? = nil) -> String? {
        pool.choose(task: "t", priority: priority, require: require, avoid: avoid.flatMap { pool.index(of: $0) },
                    strategy: strategy, now: 0).map { pool.members[$0].name }
    }

    @Test func bestFitTakesTheHighestCapabilityScoreAndBreaksTiesByLoad() {
        var pool = ExecutorPool([
            Self.executor("plain"),
            Self.executor("boosted", ["t": Capability(priorityBoost: 2)]),
            Self.executor("prefers-high", ["t": Capability(priorityBoost: 1)], preference: .high),
        ])
        // boost 2 beats boost 1 + preference 0 for a normal run…
        #expect(chosen(&pool, .bestFit) == "boosted")
        // …and ties with boost 1 + preference 1 for a high run: the less loaded wins.
        Self.load(&pool, "boosted", 1)
        #expect(chosen(&pool, .bestFit, priority: .high) == "prefers-high")
        Self.load(&pool, "prefers-high", 2)
        #expect(chosen(&pool, .bestFit, priority: .high) == "boosted")
    }

    @Test func loadBalancedTakesTheLowestRunningOverMaxConcurrent() {
        var pool = ExecutorPool([Self.executor("small", max: 2), Self.executor("large", max: 8)])
        Self.load(&pool, "small", 1) // 1/2
        Self.load(&pool, "large", 3) // 3/8
        #expect(chosen(&pool, .loadBalanced) == "large")
        Self.load(&pool, "large", 2) // 5/8
        #expect(chosen(&pool, .loadBalanced) == "small")
    }

    @Test func roundRobinGoesInTurnAndSkipsAFullExecutor() {
        var pool = ExecutorPool([Self.executor("a"), Self.executor("b", max: 1), Self.executor("c")])
        #expect(chosen(&pool, .roundRobin) == "a")
        #expect(chosen(&pool, .roundRobin) == "b")
        #expect(chosen(&pool, .roundRobin) == "c")
        Self.load(&pool, "b", 1)
        #expect(chosen(&pool, .roundRobin) == "a")
        #expect(chosen(&pool, .roundRobin) == "c")
    }

    @Test func priorityFirstPutsThePreferenceBeforeTheBoost() {
        var pool = ExecutorPool([
            Self.executor("boosted", ["t": Capability(priorityBoost: 5)]),
            Self.executor("urgent", preference: .critical),
            Self.executor("urgent-boosted", ["t": Capability(priorityBoost: 1)], preference: .critical),
        ])
        #expect(chosen(&pool, .priorityFirst, priority: .critical) == "urgent-boosted")
        #expect(chosen(&pool, .priorityFirst, priority: .normal) == "boosted")
        // best_fit weighs them together: boost 5 beats boost 1 + preference 1.
        #expect(chosen(&pool, .bestFit, priority: .critical) == "boosted")
    }

    @Test(arguments: AssignmentStrategy.allCases)
    func noStrategyPushesIntoAFullDrainingOfflineOrUnlabelledExecutor(_ strategy: AssignmentStrategy) {
        var pool = ExecutorPool([
            Self.executor("full", max: 1), Self.executor("typefull", ["t": Capability(maxConcurrent: 1)]),
            Self.executor("drained"), Self.executor("crashed"), Self.executor("cpu", labels: ["gpu": "no"]),
            Self.executor("other", ["u": Capability()]),
        ])
        Self.load(&pool, "full", 1)
        Self.load(&pool, "typefull", 1)
        pool.setDraining("drained", true)
        let crashed = pool.index(of: "crashed")!
        pool.begin(crashed, task: "t")
        pool.end(crashed, task: "t", lost: true, now: 0)
        #expect(pool.state(of: crashed, now: 0.5) == .offline)
        #expect(pool.state(of: pool.index(of: "full")!, now: 0) == .busy)
        #expect(pool.state(of: pool.index(of: "drained")!, now: 0) == .draining)
        #expect(chosen(&pool, strategy, require: ["gpu": "yes"]) == nil)
        // Without the label requirement the one executor left with room takes it.
        #expect(chosen(&pool, strategy) == "cpu")
        // After its backoff (1 s) the crashed one is back.
        #expect(pool.state(of: crashed, now: 1.5) == .online)
    }

    @Test func requiredLabelsAreASubsetMatch() {
        var pool = ExecutorPool([Self.executor("cpu", labels: ["zone": "a"]), Self.executor("gpu", labels: ["zone": "a", "gpu": "yes"])])
        #expect(chosen(&pool, .roundRobin, require: ["gpu": "yes", "zone": "a"]) == "gpu")
        #expect(chosen(&pool, .roundRobin, require: ["gpu": "yes", "zone": "a"]) == "gpu")
        #expect(chosen(&pool, .roundRobin, require: ["zone": "b"]) == nil)
    }

    @Test(arguments: AssignmentStrategy.allCases)
    func aRetryAvoidsThePreviousExecutorUnlessItIsTheOnlyOne(_ strategy: AssignmentStrategy) {
        var pool = ExecutorPool([Self.executor("a", ["t": Capability(priorityBoost: 3)]), Self.executor("b")])
        #expect(chosen(&pool, strategy, avoid: "a") == "b")
        Self.load(&pool, "b", 4)
        #expect(chosen(&pool, strategy, avoid: "a") == "a")
    }

    @Test func roundRobinSpreadsTenThousandRunsWithinOnePerExecutor() {
        var pool = ExecutorPool((0..<7).map { Self.executor("e\($0)", max: 1_000) })
        var random = SplitMix64(state: 24)
        var running: [(member: Int, left: Int)] = []
        var counts = Array(repeating: 0, count: 7)
        for _ in 0..<10_000 {
            // Runs of random lengths end in between.
            running = running.compactMap { run in
                if run.left == 0 { pool.end(run.member, task: "t", now: 0); return nil }
                return (run.member, run.left - 1)
            }
            let member = pool.choose(task: "t", priority: .normal, strategy: .roundRobin, now: 0)!
            pool.begin(member, task: "t")
            counts[member] += 1
            running.append((member, Int.random(in: 0..<20, using: &random)))
        }
        #expect(counts.reduce(0, +) == 10_000)
        #expect(counts.max()! - counts.min()! <= 1, "round robin counts: \(counts)")
    }

    @Test func loadBalancedSpreadsTenThousandRunsWithinFivePercent() {
        // Runs of random lengths (1 to 12 ticks) arrive at random (0 to 2 a tick) below the
        // capacity, so that the strategy, not a lack of room, decides where each goes.
        let executors = 8
        var pool = ExecutorPool((0..<executors).map { Self.executor("e\($0)", max: 4) })
        var random = SplitMix64(state: 7)
        var ending: [Int: [Int]] = [:]
        var counts = Array(repeating: 0, count: executors)
        var assigned = 0
        var tick = 0
        while assigned < 10_000 {
            for member in ending.removeValue(forKey: tick) ?? [] { pool.end(member, task: "t", now: 0) }
            for _ in 0..<Int.random(in: 0...2, using: &random) where assigned < 10_000 {
                let member = pool.choose(task: "t", priority: .normal, strategy: .loadBalanced, now: 0)!
                pool.begin(member, task: "t")
                ending[tick + Int.random(in: 1...12, using: &random), default: []].append(member)
                counts[member] += 1
                assigned += 1
            }
            tick += 1
        }
        let mean = 10_000.0 / Double(executors)
        for count in counts {
            #expect(abs(Double(count) - mean) <= mean * 0.05, "load balanced counts: \(counts)")
        }
    }
}
