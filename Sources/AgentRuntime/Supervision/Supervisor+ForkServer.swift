import AgentCore
import AgentLoop
import AgentSupervision
import Foundation
import JSONSchema

extension Supervisor {
    /// Whether and when a fork server that died is started again.
    struct ForkServerRecovery {
        /// A server was given to the supervisor (not with `AGENT_FORK_SERVER=0`).
        var wanted = false
        var timer: Int?
        /// The wait before the next restart: 0.5 s, doubling up to a minute, back to 0.5 s
        /// once a server has served for a minute.
        var delay = ForkServerRecovery.firstDelay
        var startedAt = EventLoop.now()
        /// Servers started after the first.
        var restarts = 0

        static let firstDelay = 0.5
        static let longestDelay = 60.0
    }

    /// The fork server died or failed (`why` says how): it is dropped, workers are spawned
    /// with posix_spawn, and a new server is started after a backoff.
    func forkServerFailed(_ why: String) {
        dropForkServer()
        guard forkServerRecovery.wanted, !stopping else {
            logger.warning("\(why); starting workers with posix_spawn")
            return
        }
        if EventLoop.now() - forkServerRecovery.startedAt >= ForkServerRecovery.longestDelay {
            forkServerRecovery.delay = ForkServerRecovery.firstDelay
        }
        let delay = forkServerRecovery.delay
        forkServerRecovery.delay = min(delay * 2, ForkServerRecovery.longestDelay)
        logger.warning("\(why); starting workers with posix_spawn until a new fork server is started in \(ProcessPolicy.format(delay)) s")
        scheduleForkServerRestart(after: delay)
    }

    private func scheduleForkServerRestart(after delay: Double) {
        if let timer = forkServerRecovery.timer { loop.cancel(timer) }
        forkServerRecovery.timer = loop.schedule(after: delay) { [unowned self] in
            forkServerRecovery.timer = nil
            restartForkServer()
        }
    }

    /// Runs on the loop's thread, as the first server did on it: the server's parent-death
    /// signal follows this thread.
    private func restartForkServer() {
        guard forkServer == nil, !stopping else { return }
        switch ForkServer.start(workerPath: configuration.workerPath, environment: configuration.environment,
                                cgroup: containment?.workersCgroupFD ?? -1) {
        case .success(let server):
            forkServerRecovery.restarts += 1
            forkServerRecovery.startedAt = EventLoop.now()
            forkServer = server
            logger.notice("started a new fork server (pid \(server.pid)); workers are forked again")
        case .failure(let error):
            let delay = forkServerRecovery.delay
            forkServerRecovery.delay = min(delay * 2, ForkServerRecovery.longestDelay)
            logger.warning("cannot start a new fork server: \(error); trying again in \(ProcessPolicy.format(delay)) s")
            scheduleForkServerRestart(after: delay)
        }
    }

    /// The fork server for `status`.
    var forkServerStatus: JSONValue {
        guard forkServerRecovery.wanted else { return ["enabled": false] }
        var object: JSONObject = ["enabled": true, "restarts": .number(JSONNumber(forkServerRecovery.restarts))]
        if let server = forkServer { object["pid"] = .number(JSONNumber(Int(server.pid))) }
        return .object(object)
    }
}
