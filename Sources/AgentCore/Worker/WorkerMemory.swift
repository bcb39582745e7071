import CAgentSystem
import Glibc

/// What a worker does to keep its own memory small. A forked worker shares the fork server's
/// code and relocated data; what is its own is mostly per thread: each thread's touched stack
/// pages and, in glibc, a malloc arena of its own for each thread that mallocs, up to 8 per
/// core (64 MiB reserved, its first pages touched and never given back). A worker runs a
/// handful of threads that allocate little: measured on 20 idle workers, a limit of 1 or 2
/// arenas gives each 12–17 kB of private memory back (the arenas' pages, less what the main
/// heap grows by), and 2 leaves a module's own busy threads an arena to share besides the
/// main one.
enum WorkerMemory {
    /// The environment variable that overrides the arena limit: a whole number, 0 for glibc's
    /// own limit (8 per core).
    static let arenasKey = "AGENT_WORKER_MALLOC_ARENAS"
    /// The limit when the environment does not set one.
    static let defaultArenas: Int32 = 2

    /// The arena limit `value` (the environment's) asks for: nil for glibc's own, and an
    /// explanation when `value` is not a whole number ≥ 0 (the default then holds).
    static func arenaLimit(_ value: String?) -> (limit: Int32?, problem: String?) {
        guard let value, !value.isEmpty else { return (defaultArenas, nil) }
        guard let count = Int32(value), count >= 0 else {
            return (defaultArenas, "\(arenasKey)=\"\(value)\" is not a whole number ≥ 0 (0 = glibc's own limit); using \(defaultArenas)")
        }
        return (count == 0 ? nil : count, nil)
    }

    /// Sets the process's arena limit (inherited by the workers a fork server forks). First
    /// thing in `main`: an arena made before the call is kept.
    static func limitArenas() {
        let (limit, problem) = arenaLimit(getenv(arenasKey).map { String(cString: $0) })
        if let problem { complain(problem) }
        if let limit, agent_limit_malloc_arenas(limit) != 1 {
            complain("mallopt(M_ARENA_MAX, \(limit)) failed; glibc's own arena limit holds")
        }
    }

    private static func complain(_ message: String) {
        let line = "agent-worker: \(message)\n"
        _ = line.withCString { write(2, $0, strlen($0)) }
    }
}
