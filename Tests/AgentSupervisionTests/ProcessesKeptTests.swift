@testable import AgentSupervision
import CAgentSystem
import Foundation
import Testing

/// A supervisor keeps some of the user's processes and threads (`ulimit -u`) for itself: what
/// it spawns, into a cgroup or not, runs under its limit less ``ProcessSpawner/processesKept``,
/// soft and hard, from before its first instruction, so that a command forking to the limit
/// leaves it room for its threads. Short of them, its loop waited a second per thread asked
/// and NIO stopped the process. The limit is read by a child the spawned shell forks at once
/// (set after the exec, it was missed by such a child).
@Suite(.ownThreads) struct ProcessesKeptTests {
    /// The soft and hard limit of processes of the first child of a shell spawned by `spawn`.
    static func childLimits(_ spawn: (_ argv: [String], _ stdout: Int32) -> pid_t?) -> String? {
        var pipe: [Int32] = [-1, -1]
        guard agent_pipe_cloexec(&pipe) == 0 else { return nil }
        guard let pid = spawn(["/bin/sh", "-c", "cat /proc/self/limits; true"], pipe[1]) else { return nil }
        close(pipe[1])
        var output = [UInt8]()
        var buffer = [UInt8](repeating: 0, count: 256)
        while case let count = read(pipe[0], &buffer, buffer.count), count > 0 { output += buffer.prefix(count) }
        close(pipe[0])
        var status: Int32 = 0
        waitpid(pid, &status, 0)
        let line = String(decoding: output, as: UTF8.self).split(separator: "\n").first { $0.hasPrefix("Max processes") }
        return line.map { $0.split(separator: " ").dropFirst(2).prefix(2).map { $0 == "unlimited" ? "\(rlim_t.max)" : String($0) }.joined(separator: " ") }
    }

    static func spawned(_ argv: [String], _ stdout: Int32) -> pid_t? {
        try? ProcessSpawner.spawn(path: argv[0], arguments: argv, environment: [:], stdout: stdout, stderr: 2, channel: -1, newGroup: true).get()
    }

    static func cloned(_ argv: [String], _ stdout: Int32) -> pid_t? {
        var arguments: [UnsafeMutablePointer<CChar>?] = argv.map { strdup($0) } + [nil]
        var environment: [UnsafeMutablePointer<CChar>?] = [nil]
        defer { arguments.forEach { free($0) } }
        var pid: pid_t = 0
        return agent_spawn_program(argv[0], &arguments, &environment, -1, stdout, 2, nil, 0, &pid) == 0 ? pid : nil
    }

    /// In the test process, which keeps them from here on, as a supervisor does (its children,
    /// agents started by other tests, then get the lowered limit too: far above what they use).
    @Test func childrenRunUnderTheLimitLessWhatTheSupervisorKeeps() {
        var own = rlimit()
        getrlimit(Int32(__RLIMIT_NPROC.rawValue), &own)
        ProcessSpawner.keepProcessesForSelf()
        let kept = agent_children_process_limit(UInt(own.rlim_cur), UInt(ProcessSpawner.processesKept))
        #expect(ProcessesKeptTests.childLimits(ProcessesKeptTests.spawned) == "\(kept) \(kept)")
        #expect(ProcessesKeptTests.childLimits(ProcessesKeptTests.cloned) == "\(kept) \(kept)")
        // The supervisor's own limit is untouched.
        var after = rlimit()
        getrlimit(Int32(__RLIMIT_NPROC.rawValue), &after)
        #expect(after.rlim_cur == own.rlim_cur && after.rlim_max == own.rlim_max)
    }

    @Test func aSmallLimitKeepsAQuarterOfItAndNoLimitStaysNone() {
        #expect(agent_children_process_limit(1_000, 64) == 936)
        #expect(agent_children_process_limit(40, 64) == 30)
        #expect(agent_children_process_limit(3, 64) == 3)
        #expect(agent_children_process_limit(UInt(rlim_t.max), 64) == UInt(rlim_t.max))
    }
}
