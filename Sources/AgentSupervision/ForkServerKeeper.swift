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
    private let loop: EventLoop
    private let logger: Logger
    /// Starts a new server (with the supervisor's worker path, environment and cgroup).
    private let start: () -> Result<ForkServer, ProcessSpawner.SpawnError>
    /// The supervisor is stopping: no new server then.
    private let isStopping: () -> Bool
    /// A server died: its zygotes, killed with it, are the supervisor's to reap now.
    private let serverDied: () -> Void

    package init(loop: EventLoop, logger: Logger, start: @escaping () -> Result<ForkServer, ProcessSpawner.SpawnError>,
                 isStopping: @escaping () -> Bool, serverDied: @escaping () -> Void = {}) {
        self.loop = loop
        self.logger = logger
        self.start = start
        self.isStopping = isStopping
        self.serverDied = serverDied
    }

    /// Forks workers with `server` from now on. Given one, the keeper keeps one: it restarts a
    /// server that dies.
    package func adopt(_ server: ForkServer) {
        recovery.wanted = true
        use(server)
    }

    private func use(_ server: ForkServer) {
        self.server = server
        guard server.pidFD >= 0 else { return }
        let fd = server.pidFD
        let pid = server.pid
        loop.register(fd) { [unowned self, unowned server] _ in
            loop.unregister(fd)
            let how = server.reapAfterDeath()
            // Last use of `server`: the line below releases it.
            if self.server === server { self.server = nil }
            failed("the fork server (pid \(pid)) \(how)")
            serverDied()
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
            logger.notice("started a new fork server (pid \(server.pid)); workers are forked again")
        case .failure(let error):
            let delay = recovery.delay
            recovery.delay = min(delay * 2, Recovery.longestDelay)
            logger.warning("cannot start a new fork server: \(error); trying again in \(ProcessPolicy.format(delay)) s")
            scheduleRestart(after: delay)
        }
    }

    /// Libraries (by path) whose zygote failed a request, with the identity they had then
    /// (``ModuleDescriber/identity(_:)``): their workers are forked without one until the
    /// library changes. Kept across fork servers (a failed request replaces the server).
    private var zygotesFailed: [String: String] = [:]

    /// Whether requests for `library`'s workers ask the server for its zygote.
    package func zygoteWanted(for library: String) -> Bool {
        guard let identity = zygotesFailed[library] else { return true }
        if identity == ModuleDescriber.identity(library) { return false }
        zygotesFailed[library] = nil
        return true
    }

    /// `library`'s zygote failed a request (see `agent_fork_server_serve`).
    package func zygoteFailed(for library: String) {
        zygotesFailed[library] = ModuleDescriber.identity(library)
    }

    /// Libraries (by path) whose zygote's refusal the log has told, with the identity they had
    /// then: a new fork server tells it again (its table starts empty; every failed request
    /// replaces the server), the log does not, until the library changes.
    private var refusalsTold: [String: String] = [:]

    /// Whether `library`'s zygote refusal is news for the log (from now on it is not).
    package func isNews(refusalOf library: String) -> Bool {
        let identity = ModuleDescriber.identity(library)
        if refusalsTold[library] == identity { return false }
        refusalsTold[library] = identity
        return true
    }

    /// The fork server for `status`.
    package var status: JSONValue {
        guard recovery.wanted else { return ["enabled": false] }
        var object: JSONObject = ["enabled": true, "restarts": .number(JSONNumber(recovery.restarts))]
        if let server { object["pid"] = .number(JSONNumber(Int(server.pid))) }
        return .object(object)
    }
}
