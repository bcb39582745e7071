@testable import AgentSupervision
import CAgentSystem
import Foundation
import Testing

/// A supervisor keeps some of the user's processes and threads (`ulimit -u`) for itself: what
/// it spawns — by `posix_spawn` and by the clone into a cgroup — runs under its limit less
/// ``ProcessSpawner/processesKept``, soft and hard, so that a command forking to the limit
/// leaves it room for its threads. Short of them, its loop waited a second per thread asked
/// and NIO stopped the process. Exit tests: each sets its own process's limit.
@Suite(.ownThreads) struct ProcessesKeptTests {
    /// The soft and hard limit of processes a child spawned by `spawn` has (its /proc/self/limits).
    static func childLimits(_ spawn: (_ argv: [String], _ stdout: Int32) -> pid_t?) -> String? {
        var pipe: [Int32] = [-1, -1]
        guard agent_pipe_cloexec(&pipe) == 0 else { return nil }
        guard let pid = spawn(["/bin/cat", "/proc/self/limits"], pipe[1]) else { return nil }
        close(pipe[1])
        var output = [UInt8]()
        var buffer = [UInt8](repeating: 0, count: 256)
        while case let count = read(pipe[0], &buffer, buffer.count), count > 0 { output += buffer.prefix(count) }
        close(pipe[0])
        var status: Int32 = 0
        waitpid(pid, &status, 0)
        let line = String(decoding: output, as: UTF8.self).split(separator: "\n").first { $0.hasPrefix("Max processes") }
        return line.map { $0.split(separator: " ").dropFirst(2).prefix(2).joined(separator: " ") }
    }

    static func posixSpawned(_ argv: [String], _ stdout: Int32) -> pid_t? {
        try? ProcessSpawner.spawn(path: argv[0], arguments: argv, environment: [:], stdout: stdout, stderr: 2, channel: -1, newGroup: true).get()
    }

    static func cloned(_ argv: [String], _ stdout: Int32) -> pid_t? {
        var arguments: [UnsafeMutablePointer<CChar>?] = argv.map { strdup($0) } + [nil]
        var environment: [UnsafeMutablePointer<CChar>?] = [nil]
        defer { arguments.forEach { free($0) } }
        var pid: pid_t = 0
        return agent_spawn_program(argv[0], &arguments, &environment, -1, stdout, 2, nil, 0, &pid) == 0 ? pid : nil
    }

    static func setLimit(_ value: rlim_t) -> Bool {
        var limit = rlimit(rlim_cur: value, rlim_max: value)
        return setrlimit(Int32(__RLIMIT_NPROC.rawValue), &limit) == 0
    }

    @Test func childrenRunUnderTheLimitLessWhatTheSupervisorKeeps() async {
        await #expect(processExitsWith: .success) {
            guard ProcessesKeptTests.setLimit(1_000) else { exit(10) }
            // Nothing kept yet: a child has the whole limit.
            guard ProcessesKeptTests.childLimits(ProcessesKeptTests.posixSpawned) == "1000 1000" else { exit(11) }
            ProcessSpawner.keepProcessesForSelf()
            let kept = "\(1_000 - ProcessSpawner.processesKept) \(1_000 - ProcessSpawner.processesKept)"
            guard ProcessesKeptTests.childLimits(ProcessesKeptTests.posixSpawned) == kept else { exit(12) }
            guard ProcessesKeptTests.childLimits(ProcessesKeptTests.cloned) == kept else { exit(13) }
            // The supervisor's own limit is untouched.
            var own = rlimit()
            getrlimit(Int32(__RLIMIT_NPROC.rawValue), &own)
            guard own.rlim_cur == 1_000, own.rlim_max == 1_000 else { exit(14) }
            exit(0)
        }
    }

    @Test func aSmallLimitKeepsAQuarterAndAnUnlimitedOneNothing() async {
        await #expect(processExitsWith: .success) {
            ProcessSpawner.keepProcessesForSelf()
            // Raising the hard limit takes privilege: checked where the test has it.
            if ProcessesKeptTests.setLimit(rlim_t.max), ProcessesKeptTests.childLimits(ProcessesKeptTests.posixSpawned) != "unlimited unlimited" { exit(11) }
            guard ProcessesKeptTests.setLimit(40), ProcessesKeptTests.childLimits(ProcessesKeptTests.posixSpawned) == "30 30",
                  ProcessesKeptTests.childLimits(ProcessesKeptTests.cloned) == "30 30" else { exit(10) }
            exit(0)
        }
    }
}
