import Synchronization

/// The describe workers alive in this process (see ``ModuleDescriber``). The supervisor kills
/// children that are not its workers as orphans of dead workers; a settings check describes
/// modules on a thread of its own while the loop runs, so its describe workers are listed
/// here, and the listing and a sweep exclude each other (a worker spawned during a sweep is
/// either seen as listed, or not yet a child).
package enum DescribeWorkers {
    private static let pids = Mutex<Set<Int32>>([])

    /// Runs `spawn` (which returns the new worker's pid, if any) and lists its pid, with no
    /// sweep in between.
    package static func spawning<Failure: Error>(_ spawn: () -> Result<Int32, Failure>) -> Result<Int32, Failure> {
        pids.withLock { pids in
            let result = spawn()
            if case .success(let pid) = result { pids.insert(pid) }
            return result
        }
    }

    /// The worker was reaped.
    package static func reaped(_ pid: Int32) {
        _ = pids.withLock { $0.remove(pid) }
    }

    /// Runs `body` with the pids of the describe workers, no worker being spawned meanwhile.
    package static func whileListed<T>(_ body: (Set<Int32>) -> T) -> T {
        pids.withLock { body($0) }
    }
}
