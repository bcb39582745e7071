import Foundation

/// The cost of the assignment decision, for agent-bench (figure 10): the pool and strategies
/// are internal, so the bench measures them through this.
public enum AssignmentBenchmark {
    /// Nanoseconds per decision — choosing an executor for a run, counting the run on it, and
    /// one run ending elsewhere so that the load stays steady — over `decisions` decisions
    /// among `executors` executors that all take the task (max_concurrent 4 each, a quarter
    /// of them preferring high priority, boosts 0 to 3), after `decisions / 10` to warm up.
    public static func nanosecondsPerDecision(executors count: Int, decisions: Int, strategy: AssignmentStrategy) -> Double {
        var generator = SystemRandomNumberGenerator()
        let definitions = (0..<max(count, 1)).map { index in
            ExecutorDefinition(name: "e\(index)", tasks: ["t": .init(priorityBoost: index % 4)], maxConcurrent: 4,
                               priorityPreference: index % 4 == 0 ? .high : nil)
        }
        var pool = ExecutorPool(definitions)
        var running: [Int] = []
        running.reserveCapacity(definitions.count * 4)
        // Half full, so that some have room and some do not.
        for member in 0..<definitions.count { for _ in 0..<2 { pool.begin(member, task: "t"); running.append(member) } }
        let priorities = TaskRun.Priority.allCases
        func step(_ index: Int) {
            if let member = pool.choose(task: "t", priority: priorities[index & 3], strategy: strategy, now: 0) {
                pool.begin(member, task: "t")
                running.append(member)
            }
            let ended = Int.random(in: 0..<running.count, using: &generator)
            pool.end(running[ended], task: "t", now: 0)
            running.swapAt(ended, running.count - 1)
            running.removeLast()
        }
        for index in 0..<max(decisions / 10, 1) { step(index) }
        let start = DispatchTime.now().uptimeNanoseconds
        for index in 0..<max(decisions, 1) { step(index) }
        let elapsed = DispatchTime.now().uptimeNanoseconds - start
        return Double(elapsed) / Double(max(decisions, 1))
    }
}
