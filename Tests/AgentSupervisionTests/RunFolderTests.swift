@testable import AgentBase
@testable import AgentSupervision
import AgentTestSupport
import Foundation
import Testing

/// The run folder and its `workers` record cannot be used by another local user to make the
/// agent kill a process of their choice: a folder others can write, or a record the agent's
/// user did not write (or others can write), is refused at start with nothing killed; a record
/// kills only what is provably the previous run's.
@Suite(.ownThreads, .serialized) struct RunFolderTests {
    static let settings = #"{"enabled_modules": [], "store": {"enabled": false}, "processes": {}}"#

    /// A process of the test's in a session of its own, as a root daemon would be: the target
    /// of a forged record.
    final class Victim {
        let pid: pid_t
        let stat: ProcStat

        init() throws {
            let spawned = ProcessSpawner.spawn(path: "/bin/sleep", arguments: ["sleep", "1000"], environment: [:],
                                               stdout: -1, stderr: -1, channel: -1, newGroup: true, newSession: true)
            guard case .success(let pid) = spawned else { throw ControlError("cannot start the victim: \(spawned)") }
            self.pid = pid
            ProcFacts.waitForCommand("sleep", of: [pid])
            guard let stat = ProcStat.read(pid) else { throw ControlError("no /proc/\(pid)/stat") }
            self.stat = stat
        }

        deinit {
            kill(pid, SIGKILL)
            var status: Int32 = 0
            waitpid(pid, &status, 0)
        }

        /// A record that names this process exactly as the agent would name its own worker.
        var forgedRecord: String {
            """
            # Written by agent-control (pid 1): what its next start kills if it does not stop cleanly.
            instance 1-0
            session \(stat.session)
            home \(LeftoverRecord.cgroupText(of: pid) ?? "")
            group \(pid) \(stat.startTime)

            """
        }
    }

    private func write(_ text: String, to path: String, mode: mode_t, owner: uid_t = geteuid()) throws {
        try text.write(toFile: path, atomically: false, encoding: .utf8)
        #expect(chmod(path, mode) == 0)
        #expect(chown(path, owner, gid_t(owner == 0 ? 0 : 65534)) == 0)
    }

    /// `agent-control start` with the run folder `runDirectory`; stopped again if it started.
    private func start(_ directory: String, runDirectory: String, environment: [String: String] = ["AGENT_CGROUPS": "0"]) throws -> ProgramResult {
        let settings = directory + "/settings.json"
        try Self.settings.write(toFile: settings, atomically: true, encoding: .utf8)
        let result = try runProgram("agent-control", ["start", "--settings", settings, "--no-build", "--run-dir", runDirectory],
                                    environment: environment, timeout: 180)
        if result.status == 0 {
            let stopped = try runProgram("agent-control", ["stop", "--settings", settings, "--run-dir", runDirectory], timeout: 180)
            #expect(stopped.status == 0, "\(stopped.stdout)\(stopped.stderr)")
        }
        return result
    }

    @Test(.enabled(if: geteuid() == 0, "chown needs root"))
    func aWorldWritableRunFolderWithAnotherUsersRecordIsRefusedAndNothingIsKilled() throws {
        let directory = TestPaths.temporaryDirectory("run-folder-0777")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let run = directory + "/run"
        #expect(mkdir(run, 0o700) == 0 && chmod(run, 0o777) == 0)
        let victim = try Victim()
        try write(victim.forgedRecord, to: run + "/workers", mode: 0o644, owner: 65534)
        let result = try start(directory, runDirectory: run)
        let text = result.stdout + result.stderr
        #expect(result.status != 0, "\(text)")
        #expect(text.contains("the run folder \(run) is writable by its group and all users (mode 0777)"), "\(text)")
        #expect(text.contains("nothing was started"), "\(text)")
        #expect(ProcFacts.isAlive(victim.pid), "the forged record killed pid \(victim.pid)")
        #expect(FileManager.default.fileExists(atPath: run + "/workers"), "the refused record was removed")
    }

    @Test(.enabled(if: geteuid() == 0, "chown needs root"))
    func aRecordOfAnotherUserOrWritableByOthersIsRefusedAndNothingIsKilled() throws {
        let directory = TestPaths.temporaryDirectory("run-folder-record")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let run = directory + "/run"
        #expect(mkdir(run, 0o700) == 0)
        let victim = try Victim()
        for (mode, owner, expected) in [(mode_t(0o600), uid_t(65534), "belongs to uid 65534, not to this agent's user (uid 0)"),
                                        (mode_t(0o666), geteuid(), "is writable by others (mode 0666; the agent writes it 0600)")] {
            try write(victim.forgedRecord, to: run + "/workers", mode: mode, owner: owner)
            let result = try start(directory, runDirectory: run)
            let text = result.stdout + result.stderr
            #expect(result.status != 0, "\(text)")
            #expect(text.contains("\(run)/workers, the record of what the previous run started, \(expected)"), "\(text)")
            #expect(text.contains("nothing was started (nothing was killed)"), "\(text)")
            #expect(ProcFacts.isAlive(victim.pid), "the record killed pid \(victim.pid)")
            try? FileManager.default.removeItem(atPath: run + "/workers")
        }
    }

    @Test(.enabled(if: geteuid() == 0, "chown needs root"))
    func stopSignalsNoProcessFromAPidfileOfAnotherUser() throws {
        let directory = TestPaths.temporaryDirectory("run-folder-pidfile")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let run = directory + "/run"
        #expect(mkdir(run, 0o700) == 0 && chmod(run, 0o777) == 0)
        let victim = try Victim()
        // Another user's pidfile, locked (as a live agent's is) and naming the victim.
        let pidfile = run + "/agent.pid"
        try write("\(victim.pid)\n", to: pidfile, mode: 0o644, owner: 65534)
        // Spawned with a fresh signal mask and in a group of its own (flock and its sleep).
        let spawned = ProcessSpawner.spawn(path: "/usr/bin/flock", arguments: ["flock", pidfile, "/bin/sleep", "1000"], environment: [:],
                                           stdout: -1, stderr: -1, channel: -1, newGroup: true)
        guard case .success(let holder) = spawned else { throw ControlError("cannot start flock: \(spawned)") }
        defer {
            kill(-holder, SIGKILL)
            var status: Int32 = 0
            waitpid(holder, &status, 0)
        }
        let deadline = Date().addingTimeInterval(30)
        while Pidfile.holder(of: pidfile) == nil, Date() < deadline { Thread.sleep(forTimeInterval: 0.02) }
        #expect(Pidfile.holder(of: pidfile) == victim.pid)
        try Self.settings.write(toFile: directory + "/settings.json", atomically: true, encoding: .utf8)
        let stopped = try runProgram("agent-control", ["stop", "--settings", directory + "/settings.json", "--run-dir", run, "--timeout", "1"], timeout: 180)
        let text = stopped.stdout + stopped.stderr
        #expect(stopped.status != 0, "\(text)")
        #expect(text.contains("its pidfile cannot be trusted: \(pidfile) belongs to uid 65534"), "\(text)")
        #expect(ProcFacts.isAlive(victim.pid), "stop signalled pid \(victim.pid) from another user's pidfile")
    }

    @Test func aRecordKillsOnlyWhatIsProvablyThePreviousRunsAndSaysWhyNot() throws {
        let directory = TestPaths.temporaryDirectory("run-folder-doubt")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let run = directory + "/run"
        #expect(mkdir(run, 0o700) == 0)
        let victim = try Victim()
        let record = victim.forgedRecord.split(separator: "\n").map(String.init)
        // The agent's own user wrote these, but they do not prove the process is the agent's.
        let cases: [(String, String)] = [
            // Another cgroup than the previous supervisor's.
            (record.map { $0.hasPrefix("home ") ? "home 0::/somewhere-else" : $0 }.joined(separator: "\n"), "is not the previous supervisor's"),
            // Without the supervisor's start time, session and cgroup (as an older agent-control wrote it).
            (record.filter { !$0.hasPrefix("home ") && !$0.hasPrefix("instance ") }.joined(separator: "\n"),
             "the record does not say the previous supervisor's start time, session and cgroup"),
            // A group without its leader's start time.
            ("instance 1-0\nsession \(victim.stat.session)\ngroup \(victim.pid)\n", "has no start time; its processes are left alone"),
        ]
        for (text, reason) in cases {
            try write(text + "\n", to: run + "/workers", mode: 0o600)
            let result = try start(directory, runDirectory: run)
            #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
            #expect(ProcFacts.isAlive(victim.pid), "killed pid \(victim.pid) from the record:\n\(text)")
            let log = (try? String(contentsOfFile: directory + "/.agent/log/agent.log", encoding: .utf8)) ?? ""
            #expect(log.contains(reason), "\(reason) not in the log:\n\(log)")
        }
    }

    @Test func aStartWaitsForThePreviousRunsForkServerAndKillsOneThatDoesNotEnd() throws {
        let directory = TestPaths.temporaryDirectory("run-folder-server")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let run = directory + "/run"
        #expect(mkdir(run, 0o700) == 0)
        // The recorded server (an agent-worker of the recorded start time) never ends: a stopped one.
        let server = try PreviousForkServerTests.NamedSleeper(seconds: "1000", directory: directory)
        try write("supervisor 1 18446744073709551615\ninstance 1-2\nserver \(server.pid) \(server.start)\n", to: run + "/workers", mode: 0o600)
        let result = try start(directory, runDirectory: run)
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        let log = (try? String(contentsOfFile: directory + "/.agent/log/agent.log", encoding: .utf8)) ?? ""
        #expect(log.contains("the previous run's fork server (pid \(server.pid)) had not removed the agent's cgroups after 3.0 s; killed"), "\(log)")
        let end = try #require(server.reap(), "the recorded server outlived the start")
        if case .status(let status) = end { #expect(status & 0x7f == SIGKILL, "status \(status)") }
    }

    @Test func theDefaultRunFolderIsMadePrivateAgainAndItsRecordIs0600WhateverTheUmask() throws {
        let directory = TestPaths.temporaryDirectory("run-folder-repair")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let settings = directory + "/settings.json"
        try Self.settings.write(toFile: settings, atomically: true, encoding: .utf8)
        try PrivateFiles.makeDirectories(directory + "/.agent/run")
        #expect(chmod(directory + "/.agent/run", 0o777) == 0)
        let agent = TestPaths.products + "/agent-control"
        let started = try runProgram("/bin/sh", ["-c", "umask 000; exec \"$0\" start --settings \"$1\" --no-build", agent, settings],
                                     environment: ["AGENT_CGROUPS": "0"], timeout: 180)
        defer { _ = try? runProgram("agent-control", ["stop", "--settings", settings], timeout: 180) }
        #expect(started.status == 0, "\(started.stdout)\(started.stderr)")
        var info = stat()
        #expect(stat(directory + "/.agent/run", &info) == 0 && info.st_mode & 0o7777 == 0o700, "mode \(String(info.st_mode & 0o7777, radix: 8))")
        #expect(stat(directory + "/.agent/run/workers", &info) == 0 && info.st_mode & 0o7777 == 0o600, "mode \(String(info.st_mode & 0o7777, radix: 8))")
        let log = (try? String(contentsOfFile: directory + "/.agent/log/agent.log", encoding: .utf8)) ?? ""
        #expect((started.stdout + started.stderr + log).contains("was writable by others (mode 0777); set to 0700"), "\(started.stdout)\(started.stderr)\(log)")
    }
}
