import AgentSupervision
import Foundation

/// The floor of a `command` task: a bare `posix_spawn` + wait of `/bin/true`, through the
/// runtime's own spawn (`ProcessSpawner`, CAgentSystem's `agent_spawn`: fds, a fresh signal
/// mask, a process group of its own, as the command runner spawns), one at a time.
enum SpawnFloor {
    struct Outcome {
        /// spawn → reaped, in milliseconds.
        var latencies: Samples
        /// Spawns and waits per second, one after another.
        var perSecond: Double
        var failures: [String]
    }

    static let program = "/bin/true"

    static func run(count: Int, warmup: Int) -> Outcome {
        let devNull = open("/dev/null", O_RDWR | O_CLOEXEC)
        defer { close(devNull) }
        let environment = ProcessInfo.processInfo.environment
        var latencies = Samples()
        var failures: [String] = []
        var measuredNanoseconds: Int64 = 0
        for index in 0..<(warmup + count) {
            let start = Clock.monotonicNanoseconds()
            switch ProcessSpawner.spawn(path: program, arguments: ["true"], environment: environment,
                                        stdout: devNull, stderr: devNull, channel: -1, newGroup: true) {
            case .success(let pid):
                var status: Int32 = 0
                while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
                let elapsed = Clock.monotonicNanoseconds() - start
                if ProcessSpawner.exitCode(status) != 0 {
                    failures.append("\(program) exited with status \(status)")
                } else if index >= warmup {
                    latencies.append(Double(elapsed) / 1e6)
                    measuredNanoseconds += elapsed
                }
            case .failure(let error):
                failures.append("\(error)")
            }
            if failures.count >= 3 { break }
        }
        let perSecond = measuredNanoseconds > 0 ? Double(latencies.count) / (Double(measuredNanoseconds) / 1e9) : 0
        return Outcome(latencies: latencies, perSecond: perSecond, failures: failures)
    }
}
