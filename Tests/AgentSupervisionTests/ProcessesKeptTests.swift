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
        return line.map { $0.split(separator: " ").dropFirst(2).prefix(2).joined(separator: " ") }
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

    /// In a process of its own (an exit test), which sets its own limit: the one it has (a
    /// lower one could refuse the test's own children on a busy machine, since the user's
    /// processes count against it wherever root is not exempt), or a million for none.
    @Test func childrenRunUnderTheLimitLessWhatTheSupervisorKeeps() async {
        await #expect(processExitsWith: .success) {
            var own = rlimit()
            getrlimit(Int32(__RLIMIT_NPROC.rawValue), &own)
            let limit = own.rlim_cur == rlim_t.max ? 1_000_000 : own.rlim_cur
            var set = rlimit(rlim_cur: limit, rlim_max: limit)
            guard setrlimit(Int32(__RLIMIT_NPROC.rawValue), &set) == 0 else { exit(10) }
            // Nothing kept yet: a child has the whole limit.
            guard ProcessesKeptTests.childLimits(ProcessesKeptTests.spawned) == "\(limit) \(limit)" else { exit(11) }
            ProcessSpawner.keepProcessesForSelf()
            let kept = limit - rlim_t(ProcessSpawner.processesKept)
            guard ProcessesKeptTests.childLimits(ProcessesKeptTests.spawned) == "\(kept) \(kept)" else { exit(12) }
            guard ProcessesKeptTests.childLimits(ProcessesKeptTests.cloned) == "\(kept) \(kept)" else { exit(13) }
            // The supervisor's own limit is untouched.
            getrlimit(Int32(__RLIMIT_NPROC.rawValue), &own)
            guard own.rlim_cur == limit, own.rlim_max == limit else { exit(14) }
            exit(0)
        }
    }

    @Test func aSmallLimitKeepsAQuarterOfItAndNoLimitStaysNone() {
        #expect(agent_children_process_limit(1_000, 64) == 936)
        #expect(agent_children_process_limit(40, 64) == 30)
        #expect(agent_children_process_limit(3, 64) == 3)
        #expect(agent_children_process_limit(UInt(rlim_t.max), 64) == UInt(rlim_t.max))
    }
}
