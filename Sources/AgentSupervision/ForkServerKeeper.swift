import AgentLoop
import Foundation
import JSONSchema
import Logging

/// Keeps the supervisor's fork server (see ``ForkServer``): watches it, and when it dies or
/// fails drops it (workers are spawned with posix_spawn meanwhile) and starts a new one after
/// a backoff. A server is started on the loop's thread, as the first one was on it: the
/// server's parent-death signal follows that thread.
@LoopActor
package final class ForkServerKeeper {
    /// Whether and when a fork server that died is started again.
    struct Recovery {
        /// A server was given to the supervisor (not with `AGENT_FORK_SERVER=0`).
        var wanted = false
        var timer: Int?
        /// The wait before the next restart: 0.5 s, doubling up to a minute, back to 0.5 s
        /// once a server has served for a minute.
        var delay = Recovery.firstDelay
        var startedAt = EventLoop.now()
        /// Servers started after the first.
        var restarts = 0

        static let firstDelay = 0.5
        static let longestDelay = 60.0
    }

    /// The running server, nil: workers are spawned with posix_spawn.
    package private(set) var server: ForkServer?
    private var recovery = Recovery()
    /// The module libraries each server loads before forking (see ``ForkServer/preload(_:)``),
    /// and those left out because a server failed while loading them.
    private var preloads: [String] = []
    private var refusedPreloads: Set<String> = []
    private let loop: EventLoop
    private let logger: Logger
    /// Starts a new server (with the supervisor's worker path, environment and cgroup).
    private let start: () -> Result<ForkServer, ProcessSpawner.SpawnError>
    /// The supervisor is stopping: no new server then.
    private let isStopping: () -> Bool

    package init(loop: EventLoop, logger: Logger, start: @escaping () -> Result<ForkServer, ProcessSpawner.SpawnError>,
                 isStopping: @escaping () -> Bool) {
        self.loop = loop
        self.logger = logger
        self.start = start
        self.isStopping = isStopping
    }

    /// Forks workers with `server` from now on. Given one, the keeper keeps one: it restarts a
    /// server that dies.
    package func adopt(_ server: ForkServer) {
        recovery.wanted = true
        preloads = Array(server.preloads.keys).sorted()
        use(server)
    }

    /// Has the server, and every server after it, load `libraries` before forking (the agent's
    /// module libraries, after a reload that changed them).
    package func preload(_ libraries: [String]) {
        preloads = libraries
        server?.preload(libraries.filter { !refusedPreloads.contains($0) })
    }

    /// The server to fork a worker of `library` with: nil when there is none, or when the
    /// library changed on disk since the server loaded it — that worker is spawned, and a new
    /// server that loads the library as it is now replaces this one.
    package func server(for library: String) -> ForkServer? {
        guard let server, server.isRunning else { return nil }
        guard server.hasCurrent(library) else {
            logger.notice("the module library \(library) changed since the fork server (pid \(server.pid)) loaded it; starting a new fork server")
            drop()
            restart()
            return nil
        }
        return server
    }

    private func use(_ server: ForkServer) {
        self.server = server
        guard server.pidFD >= 0 else { return }
        let fd = server.pidFD
        let pid = server.pid
        loop.register(fd) { [unowned self, unowned server] _ in
            loop.unregister(fd)
            if self.server === server { refuseLoading(server) }
            let how = server.reapAfterDeath()
            // Last use of `server`: the line below releases it.
            if self.server === server { self.server = nil }
            failed("the fork server (pid \(pid)) \(how)")
        }
    }

    /// Stops using the fork server: no longer watched, shut down and reaped.
    package func drop() {
        guard let server else { return }
        if server.pidFD >= 0 { loop.unregister(server.pidFD) }
        server.shutDown()
        self.server = nil
    }

    /// The fork server died or failed (`why` says how): it is dropped, workers are spawned
    /// with posix_spawn, and a new server is started after a backoff.
    package func failed(_ why: String) {
        if let server { refuseLoading(server) }
        drop()
        guard recovery.wanted, !isStopping() else {
            logger.warning("\(why); starting workers with posix_spawn")
            return
        }
        if EventLoop.now() - recovery.startedAt >= Recovery.longestDelay {
            recovery.delay = Recovery.firstDelay
        }
        let delay = recovery.delay
        recovery.delay = min(delay * 2, Recovery.longestDelay)
        logger.warning("\(why); starting workers with posix_spawn until a new fork server is started in \(ProcessPolicy.format(delay)) s")
        scheduleRestart(after: delay)
    }

    /// A server failed while it was loading a module library: the next ones do not load it
    /// (its workers load it themselves), so that a library that crashes, hangs or starts a
    /// thread while it loads costs the agent one server, not one per restart.
    private func refuseLoading(_ server: ForkServer) {
        // Answers it gave before it failed are still on the socket: only an unanswered load counts.
        _ = server.awaitPreloads(timeout: 0)
        guard let library = server.pendingPreloads.first, !refusedPreloads.contains(library) else { return }
        refusedPreloads.insert(library)
        let what = server.loadFailure ?? "the fork server failed while it was loading the module library \(library) (its constructors crashed or took over a second)"
        logger.warning("\(what); the next fork servers do not load it, its workers do")
    }

    private func scheduleRestart(after delay: Double) {
        if let timer = recovery.timer { loop.cancel(timer) }
        recovery.timer = loop.schedule(after: delay) { [unowned self] in
            recovery.timer = nil
            restart()
        }
    }

    private func restart() {
        guard server == nil, !isStopping() else { return }
        switch start() {
        case .success(let server):
            recovery.restarts += 1
            recovery.startedAt = EventLoop.now()
            use(server)
            server.preload(preloads.filter { !refusedPreloads.contains($0) })
            logger.notice("started a new fork server (pid \(server.pid)); workers are forked again")
        case .failure(let error):
            let delay = recovery.delay
            recovery.delay = min(delay * 2, Recovery.longestDelay)
            logger.warning("cannot start a new fork server: \(error); trying again in \(ProcessPolicy.format(delay)) s")
            scheduleRestart(after: delay)
        }
    }

    /// The fork server for `status`.
    package var status: JSONValue {
        guard recovery.wanted else { return ["enabled": false] }
        var object: JSONObject = ["enabled": true, "restarts": .number(JSONNumber(recovery.restarts))]
        if let server {
            object["pid"] = .number(JSONNumber(Int(server.pid)))
            object["modules"] = .array(server.preloads.keys.sorted().map { .string($0) })
        }
        if !refusedPreloads.isEmpty { object["modules_not_loaded"] = .array(refusedPreloads.sorted().map { .string($0) }) }
        return .object(object)
    }
}
