@testable import AgentSupervision
import AgentTestSupport
import Foundation
import Testing

/// The children that a module starts (the faults module's `children` mode: fork and exec,
/// posix_spawn, posix_spawn without environment, posix_spawn into a new session, Foundation's
/// Process) start with default signal dispositions and an empty mask, so that `kill PID` ends them.
@Suite(.ownThreads) struct ChildSignalTests {
    @Test func childrenOfAModuleStartWithDefaultSignalsAndEndOnSIGTERM() throws {
        let directory = TestPaths.temporaryDirectory("child-signals")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let run = try AgentRun(settings: #"{"enabled_modules": ["faults"], "store": {"enabled": false}, "processes": {"kids": {"type": "fault", "mode": "children", "tick_ms": 1000}}}"#,
                               directory: directory)
        let children = try Self.children(of: run)
        #expect(Set(children.keys) == ["fork", "spawn", "bare", "setsid", "process"], "\(run.transcript)")
        ProcFacts.waitForCommand("sleep", of: Array(children.values))
        for (way, pid) in children.sorted(by: { $0.key < $1.key }) {
            #expect(ProcFacts.command(pid) == "sleep", "\(way)")
            #expect(ProcFacts.status(pid, "SigBlk") == "0000000000000000", "\(way): blocked signals")
            #expect(ProcFacts.status(pid, "SigIgn") == "0000000000000000", "\(way): ignored signals")
            kill(pid, SIGTERM)
        }
        let survivors = ProcFacts.survivors(of: Array(children.values), within: 10)
        #expect(survivors.isEmpty, "SIGTERM did not end \(children.filter { survivors.contains($0.value) }.keys.sorted())")
        #expect(run.stop() == 0)
    }

    /// The pids of the `children` event, by the way each was started.
    static func children(of run: AgentRun, process: String = "kids") throws -> [String: Int32] {
        let line = try #require(run.waitForLine { $0.contains(#""type":"children""#) && $0.contains(#""source":"\#(process)""#) }, "\(run.transcript)")
        let event = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        let payload = try #require(event["payload"] as? [String: Any])
        return payload.compactMapValues { ($0 as? Int).map(Int32.init) }
    }
}

/// `kill -9` of the supervisor while workers have children (in the worker's process group,
/// without environment, in a session of their own, started by Foundation's Process, and the
/// faults module's `grandchild`): none of them survives, at once with a cgroup, at the next
/// start without one.
@Suite(.ownThreads) struct EscapedChildrenTests {
    static let settings = #"{"enabled_modules": ["faults"], "store": {"enabled": false}, "processes": {"kids": {"type": "fault", "mode": "children", "tick_ms": 1000}, "gc": {"type": "fault", "mode": "grandchild", "tick_ms": 1000}}}"#

    /// Whether this machine lets the supervisor make a cgroup (v2, writable).
    static var cgroupsWritable: Bool {
        guard let own = CgroupLocation.ownCgroupDirectory() else { return false }
        return access(own, W_OK) == 0
    }


    /// Starts the agent, waits for every child to run `sleep`, and SIGKILLs the supervisor.
    /// Returns the run and the pids of the workers and their children.
    private func startAndKill(directory: String, environment: [String: String]) throws -> (run: AgentRun, pids: [Int32]) {
        let run = try AgentRun(settings: Self.settings, environment: environment, directory: directory)
        var pids = Array(try ChildSignalTests.children(of: run).values)
        let line = try #require(run.waitForLine { $0.contains(#""type":"grandchild""#) }, "\(run.transcript)")
        let event = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        pids.append(Int32(try #require((event["payload"] as? [String: Any])?["pid"] as? Int)))
        ProcFacts.waitForCommand("sleep", of: pids)
        pids += run.workerPids("kids") + run.workerPids("gc")
        #expect(pids.count == 8 && pids.allSatisfy(ProcFacts.isAlive), "\(run.transcript)")
        kill(run.process.processIdentifier, SIGKILL)
        #expect(run.waitForExit(timeout: 10) != nil)
        return (run, pids)
    }

    @Test(.enabled(if: cgroupsWritable)) func killedSupervisorsCgroupIsKilledAndRemovedAtOnce() throws {
        let directory = TestPaths.temporaryDirectory("escape-cgroup")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let (first, pids) = try startAndKill(directory: directory, environment: [:])
        // The fork server, in the cgroup, kills it when the supervisor's socket closes.
        let survivors = ProcFacts.survivors(of: pids, within: 10)
        #expect(survivors.isEmpty, "alive after the supervisor's death: \(survivors.map { "\($0) \(ProcFacts.command($0))" })")
        let cgroupLine = try #require(first.stderrLines.first { $0.contains("workers run in the cgroup ") }, "\(first.transcript)")
        let cgroup = String(try #require(cgroupLine.components(separatedBy: "workers run in the cgroup ").last?.split(separator: ",").first))
        let deadline = Date().addingTimeInterval(10)
        while FileManager.default.fileExists(atPath: cgroup), Date() < deadline { Thread.sleep(forTimeInterval: 0.02) }
        #expect(!FileManager.default.fileExists(atPath: cgroup), "the fork server did not remove the cgroup")
        // The next start makes it again; a clean stop removes it and the record.
        let second = try AgentRun(settings: Self.settings, directory: directory)
        #expect(second.waitForLines(onStderr: true, count: 2) { $0.contains("ready in") }.count == 2, "\(second.transcript)")
        #expect(second.stderrLines.contains { $0.contains("workers run in the cgroup \(cgroup)") })
        #expect(second.stop() == 0)
        #expect(!FileManager.default.fileExists(atPath: cgroup), "the cgroup outlived a clean stop")
        #expect(!FileManager.default.fileExists(atPath: directory + "/.agent/run/workers"))
    }

    @Test(.enabled(if: cgroupsWritable)) func withoutTheForkServerTheNextStartKillsWhatTheCgroupHeld() throws {
        let directory = TestPaths.temporaryDirectory("escape-spawned")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let environment = ["AGENT_FORK_SERVER": "0"]
        let (_, pids) = try startAndKill(directory: directory, environment: environment)
        // Nothing in the cgroup kills it then: the workers die (parent-death signal), their
        // children live on until the next start.
        Thread.sleep(forTimeInterval: 0.5)
        #expect(pids.contains(where: ProcFacts.isAlive))
        try expectTheNextStartKills(pids, directory: directory, environment: environment)
    }

    /// How a running agent's run folder is taken from under it, and what it runs with.
    struct Removal: Sendable, CustomTestStringConvertible {
        var removed: String
        var environment: [String: String]
        var processes: String
        var testDescription: String { "\(removed) removed, \(environment.isEmpty ? "defaults" : environment.map { "\($0)=\($1)" }.joined(separator: " "))" }

        static let ticking = #"{"tick": {"type": "fault", "tick_ms": 200}}"#
        static let all: [Removal] = [
            // The cgroup is found held by the running supervisor.
            Removal(removed: ".agent/run", environment: [:], processes: ticking),
            // The record is found, written by a supervisor that still runs.
            Removal(removed: ".agent/run/agent.pid", environment: [:], processes: ticking),
            Removal(removed: ".agent/run/agent.pid", environment: ["AGENT_CGROUPS": "0"], processes: ticking),
            // Nothing in the cgroup at all: no fork server, no worker.
            Removal(removed: ".agent/run", environment: ["AGENT_FORK_SERVER": "0"], processes: #"{"tick": {"type": "fault", "enabled": false}}"#),
        ]
    }

    /// A second agent started from the run folder of one that still runs (its pidfile, or the
    /// whole folder, removed) is refused, rather than killing the running agent's workers as
    /// a dead run's leftovers: the running one keeps its workers and stops cleanly.
    @Test(.enabled(if: cgroupsWritable), arguments: Removal.all)
    func aStartBesideARunningAgentWhoseRunFolderWasTakenIsRefused(_ removal: Removal) throws {
        let directory = TestPaths.temporaryDirectory("second-agent")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let settings = #"{"enabled_modules": ["faults"], "store": {"enabled": false}, "processes": \#(removal.processes)}"#
        let first = try AgentRun(settings: settings, arguments: ["--no-build", "--quiet"], environment: removal.environment, directory: directory)
        #expect(first.waitForLine(onStderr: true) { $0.contains("control socket:") } != nil, "\(first.transcript)")
        let running = removal.processes.contains("enabled") ? nil : first.waitForLine(onStderr: true) { $0.contains("[tick] ready in") }.flatMap { _ in first.workerPids("tick").last }
        try FileManager.default.removeItem(atPath: directory + "/" + removal.removed)
        let second = try AgentRun(settings: settings, arguments: ["--no-build", "--quiet"], environment: removal.environment, directory: directory)
        let status = second.waitForExit(timeout: 60)
        if status == nil { _ = second.stop() }
        #expect(status != nil && status != 0, "\(second.transcript)")
        let refusal = "an agent of this run folder still runs (pid \(first.process.processIdentifier))"
        #expect(second.stderrLines.contains { $0.contains(refusal) && $0.contains("nothing was started") }, "\(second.transcript)")
        if let running { #expect(ProcFacts.isAlive(running), "the running agent's worker was killed") }
        #expect(first.stop() == 0, "\(first.transcript)")
    }

    /// A start into a cgroup removed since it was opened fails as a missing program would
    /// (ENOENT); the error says the cgroup is gone instead.
    @Test(.enabled(if: cgroupsWritable)) func aSpawnIntoARemovedCgroupSaysTheCgroupIsGone() throws {
        let own = try #require(CgroupLocation.ownCgroupDirectory())
        let path = own + "/agent-removed-\(getpid())"
        #expect(mkdir(path, 0o755) == 0, "mkdir \(path): \(String(cString: strerror(errno)))")
        let fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        defer { close(fd) }
        #expect(rmdir(path) == 0)
        let spawned = ProcessSpawner.spawn(path: "/bin/true", arguments: ["true"], environment: [:], stdout: -1, stderr: -1,
                                           channel: -1, newGroup: true, cgroup: fd)
        guard case .failure(let error) = spawned else {
            Issue.record("a spawn into a removed cgroup started \(spawned)")
            return
        }
        #expect(error.cgroupRemoved && error.errno == ENOENT, "\(error)")
        #expect(error.description.contains("the workers' cgroup was removed under this agent"), "\(error)")
    }

    /// A folder held open by a process of this user is found, with that process; a file in it
    /// held open, or the folder as a working directory, is not the folder held.
    @Test func aFolderHeldOpenIsFoundByItsHolderAndNothingElse() throws {
        let folder = TestPaths.temporaryDirectory("held")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        #expect(FileManager.default.createFile(atPath: folder + "/file", contents: Data()))
        #expect(WorkerContainment.holder(of: folder) == nil)
        // Foundation's Process hangs in waits in this test process: posix_spawn and waitpid.
        func shell(_ script: String) throws -> pid_t {
            try ProcessSpawner.spawn(path: "/bin/sh", arguments: ["sh", "-c", script, folder], environment: [:],
                                     stdout: -1, stderr: -1, channel: -1, newGroup: true).get()
        }
        func end(_ pid: pid_t) {
            kill(pid, SIGKILL)
            var status: Int32 = 0
            while waitpid(pid, &status, 0) < 0, errno == EINTR {}
        }
        let other = try shell(#"cd "$0" && exec 8< file && exec sleep 1000"#)
        defer { end(other) }
        let holder = try shell(#"exec 9< "$0" && exec sleep 1000"#)
        defer { end(holder) }
        let deadline = Date().addingTimeInterval(30)
        while WorkerContainment.holder(of: folder) == nil, Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
        #expect(WorkerContainment.holder(of: folder) == holder)
    }

    /// A killed agent's leftovers, its record gone with its run folder, hold nothing the
    /// running-agent check looks for: the next start kills them from the cgroup and runs.
    @Test(.enabled(if: cgroupsWritable)) func leftoversOfAKilledAgentWhoseRunFolderWasRemovedAreKilledNotMistakenForAnAgent() throws {
        let directory = TestPaths.temporaryDirectory("escape-no-record")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let environment = ["AGENT_FORK_SERVER": "0"]
        let (_, pids) = try startAndKill(directory: directory, environment: environment)
        try FileManager.default.removeItem(atPath: directory + "/.agent/run")
        let next = try AgentRun(settings: #"{"enabled_modules": ["faults"], "store": {"enabled": false}, "processes": {}}"#,
                                environment: environment, directory: directory)
        #expect(next.waitForLine(onStderr: true) { $0.contains("by an earlier run") } != nil, "\(next.transcript)")
        #expect(!next.stderrLines.contains { $0.contains("still runs") }, "\(next.transcript)")
        let survivors = ProcFacts.survivors(of: pids, within: 10)
        #expect(survivors.isEmpty, "alive after the next start: \(survivors.map { "\($0) \(ProcFacts.command($0))" })")
        #expect(next.stop() == 0)
    }

    @Test func withoutCgroupsTheNextStartKillsWhatTheWorkersLeft() throws {
        let directory = TestPaths.temporaryDirectory("escape-groups")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let environment = ["AGENT_CGROUPS": "0"]
        let (first, pids) = try startAndKill(directory: directory, environment: environment)
        #expect(first.stderrLines.contains { $0.contains("workers run without a cgroup (AGENT_CGROUPS=0)") }, "\(first.transcript)")
        Thread.sleep(forTimeInterval: 0.5)
        #expect(pids.contains(where: ProcFacts.isAlive))
        try expectTheNextStartKills(pids, directory: directory, environment: environment)
    }

    /// Starts the agent again in `directory`: it says it killed what its previous run left,
    /// and none of `pids` survives.
    private func expectTheNextStartKills(_ pids: [Int32], directory: String, environment: [String: String]) throws {
        let next = try AgentRun(settings: #"{"enabled_modules": ["faults"], "store": {"enabled": false}, "processes": {}}"#,
                                environment: environment, directory: directory)
        let killed = next.waitForLine(onStderr: true) { $0.contains("left behind by this agent's previous run") }
        #expect(killed != nil, "\(next.transcript)")
        let survivors = ProcFacts.survivors(of: pids, within: 10)
        #expect(survivors.isEmpty, "alive after the next start: \(survivors.map { "\($0) \(ProcFacts.command($0))" })")
        #expect(next.stop() == 0)
    }
}
