@testable import AgentSupervision
import AgentTestSupport
import Foundation
import Logging
import Testing

/// A start waits for the previous run's fork server, named in the run folder's record, to end
/// its removal of the agent's cgroups before it makes them again (`WorkerContainment.awaitServer`).
@Suite(.ownThreads) struct PreviousForkServerTests {
    /// A process named `agent-worker` (a copy of sleep) that sleeps `seconds`, as this process's child.
    final class NamedSleeper {
        let pid: pid_t
        let start: UInt64

        /// What a run's fork server carries in its environment (see `LeftoverRecord.serverToken`).
        static let token = "AGENT_INSTANCE=1-2"

        init(seconds: String, name: String = "agent-worker", environment: [String] = [token], directory: String) throws {
            let program = directory + "/" + name
            if !FileManager.default.fileExists(atPath: program) {
                try FileManager.default.copyItem(atPath: "/bin/sleep", toPath: program)
            }
            var pid: pid_t = 0
            let arguments = [program, seconds]
            let pointers = arguments.map { strdup($0) } + [nil]
            let variables = environment.map { strdup($0) } + [nil]
            defer { (pointers + variables).forEach { free($0) } }
            // ETXTBSY while a thread of this process that forked meanwhile still holds the copy
            // open for writing (until its child execs): again, for a slow machine's time.
            let deadline = Date().addingTimeInterval(30)
            var spawned = posix_spawn(&pid, program, nil, nil, pointers, variables)
            while spawned == ETXTBSY, Date() < deadline {
                Thread.sleep(forTimeInterval: 0.01)
                spawned = posix_spawn(&pid, program, nil, nil, pointers, variables)
            }
            try #require(spawned == 0, "posix_spawn: \(String(cString: strerror(spawned)))")
            self.pid = pid
            ProcFacts.waitForCommand(name, of: [pid])
            start = try #require(ProcStat.read(pid)?.startTime)
        }

        /// How it ended, once it has (waited for a slow machine's time).
        enum End: Equatable {
            case status(Int32)
            /// Dead, and reaped by another wait of this process (another test's wait for a
            /// child of its own may take any): its status is not known.
            case reapedElsewhere
        }

        /// Reaps it once it has ended (waiting a slow machine's time); nil while it lives.
        func reap() -> End? {
            guard ProcFacts.survivors(of: [pid], within: 30).isEmpty else { return nil }
            var status: Int32 = 0
            let reaped = waitpid(pid, &status, WNOHANG)
            self.reaped = reaped == pid || (reaped < 0 && errno == ECHILD)
            if reaped == pid { return .status(status) }
            return self.reaped ? .reapedElsewhere : nil
        }

        /// Reaped: its pid may be another process's now.
        private var reaped = false

        deinit {
            guard !reaped else { return }
            // Reaped, not left a zombie: a zombie child of the test process confuses
            // swift-testing's wait for its exit tests' children (a CI run hung on one).
            kill(pid, SIGKILL)
            var status: Int32 = 0
            while waitpid(pid, &status, 0) < 0, errno == EINTR {}
        }
    }

    @Test func aRecordsServerLineIsReadWithItsStartTime() {
        let record = LeftoverRecord("supervisor 10 100\nserver 11 120\ncgroup /sys/fs/cgroup/agent-1\nserver twelve\n")
        #expect(record.server == LeftoverRecord.Named(pid: 11, start: 120))
        #expect(record.supervisor == LeftoverRecord.Named(pid: 10, start: 100))
        #expect(LeftoverRecord("server 11\n").server == nil)
        #expect(record.serverToken == "AGENT_WORKER_CGROUP=/sys/fs/cgroup/agent-1/workers")
        #expect(LeftoverRecord("instance 10-100\n").serverToken == "AGENT_INSTANCE=10-100")
        #expect(LeftoverRecord("server 11 120\n").serverToken == nil)
    }

    @Test func aServerThatEndsOnItsOwnIsWaitedForAndNotKilled() throws {
        let directory = TestPaths.temporaryDirectory("previous-server-ends")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let server = try NamedSleeper(seconds: "0.3", directory: directory)
        // A generous limit: the sleeper ends long before it on any machine.
        WorkerContainment.awaitServer(LeftoverRecord.Named(pid: server.pid, start: server.start), token: NamedSleeper.token, timeout: 60, logger: Logger(label: "test"))
        // Returned once it had exited: it is a zombie (or gone) now, and its status is its own exit.
        #expect(!ProcFacts.isAlive(server.pid))
        let end = try #require(server.reap())
        if case .status(let status) = end { #expect(status & 0x7f == 0 && (status >> 8) & 0xff == 0, "status \(status)") }
    }

    @Test func aServerThatDoesNotEndIsKilledAfterTheTimeout() throws {
        let directory = TestPaths.temporaryDirectory("previous-server-stays")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let server = try NamedSleeper(seconds: "600", directory: directory)
        WorkerContainment.awaitServer(LeftoverRecord.Named(pid: server.pid, start: server.start), token: NamedSleeper.token, timeout: 0.2, logger: Logger(label: "test"))
        let end = try #require(server.reap(), "the server outlived the wait")
        // A sleep of 600 s dead within the test was killed; its status says by what, when this
        // test reaped it.
        if case .status(let status) = end { #expect(status & 0x7f == SIGKILL, "status \(status)") }
    }

    @Test func aProcessThatIsNotTheRecordedServerIsNeitherWaitedForNorKilled() throws {
        let directory = TestPaths.temporaryDirectory("previous-server-other")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        // The recorded pid with another start time (a reused pid), and a process of another name.
        let reused = try NamedSleeper(seconds: "600", directory: directory)
        WorkerContainment.awaitServer(LeftoverRecord.Named(pid: reused.pid, start: reused.start + 1), token: NamedSleeper.token, timeout: 0.2, logger: Logger(label: "test"))
        #expect(ProcFacts.isAlive(reused.pid))
        let other = try NamedSleeper(seconds: "600", name: "not-a-server", directory: directory)
        WorkerContainment.awaitServer(LeftoverRecord.Named(pid: other.pid, start: other.start), token: NamedSleeper.token, timeout: 0.2, logger: Logger(label: "test"))
        #expect(ProcFacts.isAlive(other.pid))
        // Another run's fork server: its environment names another cgroup or instance.
        let another = try NamedSleeper(seconds: "600", environment: ["AGENT_INSTANCE=3-4"], directory: directory)
        WorkerContainment.awaitServer(LeftoverRecord.Named(pid: another.pid, start: another.start), token: NamedSleeper.token, timeout: 0.2, logger: Logger(label: "test"))
        #expect(ProcFacts.isAlive(another.pid))
    }
}
