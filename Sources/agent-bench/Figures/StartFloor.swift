import AgentSupervision
import Foundation

/// The floor of figure 8's launch: what the two programs on the first worker's path cost before
/// they do anything of the agent's — `agent-control --version` (its load, the Swift runtime's
/// start, the parse of one flag) and `agent-worker --version` (the fork server's load: the
/// toolchain's Foundation and runtime libraries, which every module links) — each alone and
/// both at once, as a launch runs them side by side on the machine's cores. Spawned as
/// ConsoleRun spawns agent-control; from just before the spawn until each is reaped. Both at
/// once is a lower bound of the launch's loads: agent-control spawns the server only once it runs.
enum StartFloor {
    struct Outcome {
        /// Milliseconds: agent-control alone, agent-worker alone, both started together.
        var control = Samples()
        var worker = Samples()
        var both = Samples()
    }

    static func run(_ environment: BenchEnvironment, count: Int, warmup: Int = 2) throws -> Outcome {
        var outcome = Outcome()
        let control = (environment.agentControl, ["agent-control", "--version"])
        let worker = (environment.agentWorker, ["agent-worker", "--version"])
        for index in 0..<(warmup + count) {
            // Alternated, so that a drift of the machine weighs on all three alike.
            let times = (try spanOf([control]), try spanOf([worker]), try spanOf([control, worker]))
            guard index >= warmup else { continue }
            outcome.control.append(times.0)
            outcome.worker.append(times.1)
            outcome.both.append(times.2)
        }
        return outcome
    }

    /// Spawns the programs at once and waits for all; milliseconds until the last is reaped.
    private static func spanOf(_ programs: [(path: String, arguments: [String])]) throws -> Double {
        let devNull = open("/dev/null", O_RDWR | O_CLOEXEC)
        defer { close(devNull) }
        let environment = ProcessInfo.processInfo.environment
        let start = Clock.monotonicNanoseconds()
        var started: [(pid: pid_t, program: (path: String, arguments: [String]))] = []
        var failure: String?
        for program in programs {
            switch ProcessSpawner.spawn(path: program.path, arguments: program.arguments, environment: environment,
                                        stdout: devNull, stderr: devNull, channel: -1, newGroup: true) {
            case .success(let pid): started.append((pid, program))
            case .failure(let error): failure = failure ?? "\(error)"
            }
        }
        // `--version` exits at once; a program that hangs here is a broken build, seen as one.
        for (pid, program) in started {
            var status: Int32 = 0
            while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
            if ProcessSpawner.exitCode(status) != 0 {
                failure = failure ?? "\(program.arguments.joined(separator: " ")) exited with status \(status)"
            }
        }
        let elapsed = Clock.monotonicNanoseconds() - start
        if let failure { throw BenchError(failure) }
        return Double(elapsed) / 1e6
    }
}
