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

    /// The environment variable that, set to 0 (or no, false, off), keeps the code pages the
    /// start touched mapped, in workers and the fork server as in agent-control.
    static let releaseStartPagesKey = "AGENT_RELEASE_START_PAGES"
    /// How long after a worker says ready, and after the fork server's last request, the code
    /// pages are given back: the start is over by then, a module's first work begun.
    static let releaseDelayMilliseconds: Int32 = 1000

    /// Whether the start's code pages are given back (the environment does not say no).
    static var releasesStartPages: Bool {
        !EnvironmentSwitch.isOff(getenv(releaseStartPagesKey).map { String(cString: $0) })
    }

    /// Gives back, `releaseDelayMilliseconds` from now on a thread of its own, the code pages
    /// the worker's start touched (see `agent_release_file_pages` in file_pages.c): after its
    /// ready frame, and in a warm spare once it waits for its start frame too.
    static func releaseStartPagesLater() {
        guard releasesStartPages else { return }
        if agent_release_file_pages_later(UInt32(releaseDelayMilliseconds)) != 0 {
            complain("cannot start the thread that gives the start's code pages back: \(String(cString: strerror(errno)))")
        }
    }

    /// The fork server's delay before it gives its code pages back (−1: it keeps them).
    static var forkServerReleaseDelay: Int32 { releasesStartPages ? releaseDelayMilliseconds : -1 }

    private static func complain(_ message: String) {
        let line = "agent-worker: \(message)\n"
        _ = line.withCString { write(2, $0, strlen($0)) }
    }
}
