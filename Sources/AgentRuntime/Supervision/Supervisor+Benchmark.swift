import AgentLoop

extension Supervisor {
    /// Starts a worker for every process that has none and returns at once, without entering
    /// the loop: for tools that drive the loop themselves with ``run(until:timeout:)`` (the
    /// benchmark, tests). Call it on the thread that runs the loop: a worker's parent-death
    /// signal follows the thread that spawned it.
    public nonisolated func startAll() {
        inbox.isolated {
            stopping = false
            for process in processes where !process.hasWorker { spawn(process) }
        }
    }
}
