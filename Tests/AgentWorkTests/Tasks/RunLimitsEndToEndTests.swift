@testable import AgentSupervision
import AgentCore
import AgentTestSupport
@testable import AgentWork
import Foundation
import Testing

/// Issue 34 item 4: a task's `limits` are enforced — in the run's cgroup v2 where the agent's
/// cgroup has the controllers, else in groups of the run in the cgroup v1 hierarchies (as on
/// this machine and CI's). The real agent binary, real commands, real cgroups.
@Suite(.ownThreads) struct RunLimitsEndToEndTests {
    /// Whether runs' limits can be enforced here: the agent can make cgroups, and the memory and
    /// cpu controllers are handed down in v2 or writable in v1.
    static var limitsEnforceable: Bool {
        guard RunCgroupEndToEndTests.cgroupsWritable else { return false }
        return !RunCgroupEndToEndTests.controllersMissing
            || ["memory", "cpu"].allSatisfy { CgroupV1Limits.ownFolder($0).map { access($0, W_OK) == 0 } == true }
    }

    static let allocate = ["/usr/bin/python3", "-c", "b = b'x' * (200 * 1024 * 1024); print('{\"allocated\": true}')"]

    static func tasks() -> String {
        let command = String(decoding: try! JSONSerialization.data(withJSONObject: allocate), as: UTF8.self)
        return #"""
            "greedy": {"type": "command", "command": \#(command), "limits": {"memory": "32M"}},
            "free": {"type": "command", "command": \#(command)},
            "spin": {"type": "command", "shell": true, "command": "while :; do :; done", "limits": {"cpu": 0.1, "memory": "64M"}},
            "where": {"type": "command", "command": ["/bin/cat", "/proc/self/cgroup"], "limits": {"memory": "64M", "cpu": 0.5}}
            """#
    }

    /// The folders of the cgroups of attempt 1 of run `id` (v2, and v1 memory and cpu where
    /// limits go there), found under the agent's folders.
    static func groups(of id: String) -> [String] {
        let owns = [CgroupLocation.ownCgroupDirectory()] + ["memory", "cpu"].map(CgroupV1Limits.ownFolder)
        return Set(owns.compactMap { $0 }).flatMap { own in
            ((try? FileManager.default.contentsOfDirectory(atPath: own)) ?? []).filter { $0.hasPrefix("agent-") }
                .map { "\(own)/\($0)/run-\(RunCgroup.safe(id))-1" }
                .filter { FileManager.default.fileExists(atPath: $0) }
        }.sorted()
    }

    /// The group of run `id` whose `cpu.stat` throttles (v1 cpu group, or v2 with the cpu
    /// controller), waiting until its groups are there.
    static func waitForGroups(of id: String, count: Int) -> [String] {
        let deadline = Date().addingTimeInterval(TaskInterruptionEndToEndTests.patience)
        var found: [String] = []
        repeat {
            found = groups(of: id)
            if found.count >= count { return found }
            Thread.sleep(forTimeInterval: 0.05)
        } while Date() < deadline
        return found
    }

    /// How many groups the run has: v2 alone where it has both controllers; else v2 and one
    /// per v1 hierarchy.
    static var groupCount: Int {
        RunCgroupEndToEndTests.controllersMissing ? 1 + Set(["memory", "cpu"].compactMap(CgroupV1Limits.ownFolder)).count : 1
    }

    /// Runs `spin` (limited) on `agent` until its groups are there and it is running, then kills
    /// the agent with SIGKILL. The run's groups, and the agent's folders that hold them.
    static func killWhileSpinning(_ agent: AgentRun, directory: String) throws -> (groups: [String], agentFolders: Set<String>) {
        let id = try RunCgroupEndToEndTests.runID(agent, "spin")
        let groups = Self.waitForGroups(of: id, count: Self.groupCount)
        #expect(groups.count == Self.groupCount, "\(groups)\n\(agent.transcript)")
        let agentFolders = Set(groups.map { URL(fileURLWithPath: $0).deletingLastPathComponent().path })
        #expect(TaskFrontTests.waitForCommittedRun(id, status: "running", in: directory))
        #expect(agent.stop(signal: SIGKILL) != nil, "the agent did not die of SIGKILL")
        return (groups, agentFolders)
    }

    static func finished(_ agent: AgentRun, _ id: String) -> [String: Any]? {
        TaskInterruptionEndToEndTests.waitForRun(agent, id) {
            ($0["status"] as? String).flatMap(TaskRun.Status.init(rawValue:))?.isFinished == true
        }
    }

    @Test(.enabled(if: limitsEnforceable)) func aRunOverItsMemoryLimitFailsNamingTheLimitAndWithoutItSucceeds() throws {
        let (agent, _) = try TaskAgent.agent(tasks: Self.tasks(), directory: TestPaths.temporaryDirectory("limits-memory"))
        defer { _ = agent.stop() }
        #expect(agent.stderrLines.contains { $0.contains(#"task limits ("limits": memory, cpu) are enforced: memory by cgroup v"#) },
                "\(agent.transcript)")
        let greedy = try RunCgroupEndToEndTests.runID(agent, "greedy")
        let free = try RunCgroupEndToEndTests.runID(agent, "free")
        let limited = Self.finished(agent, greedy)
        #expect(limited?["status"] as? String == "failed", "\(limited ?? [:])\n\(agent.transcript)")
        let error = limited?["error"] as? String ?? ""
        #expect(error.contains("killed by its memory limit") && error.contains(#"(the task's "limits": {"memory"}, 33554432 bytes)"#), "\(error)")
        let unlimited = Self.finished(agent, free)
        #expect(unlimited?["status"] as? String == "succeeded", "\(unlimited ?? [:])")
    }

    @Test(.enabled(if: limitsEnforceable)) func aRunOverItsCPULimitIsThrottledByItsCgroup() throws {
        let (agent, _) = try TaskAgent.agent(tasks: Self.tasks(), directory: TestPaths.temporaryDirectory("limits-cpu"))
        defer { _ = agent.stop() }
        let id = try RunCgroupEndToEndTests.runID(agent, "spin")
        let groups = Self.waitForGroups(of: id, count: Self.groupCount)
        let stats = groups.map { $0 + "/cpu.stat" }.filter { RunCgroup.field("nr_throttled", in: $0) != nil }
        #expect(!stats.isEmpty, "no cpu.stat with nr_throttled in \(groups)\n\(agent.transcript)")
        // The kernel counts each period the loop was stopped for its quota: certain, however loaded.
        let deadline = Date().addingTimeInterval(TaskInterruptionEndToEndTests.patience)
        while !stats.isEmpty, stats.allSatisfy({ RunCgroup.field("nr_throttled", in: $0) ?? 0 == 0 }), Date() < deadline {
            Thread.sleep(forTimeInterval: 0.05)
        }
        let throttled = stats.compactMap { RunCgroup.field("nr_throttled", in: $0) }.max() ?? 0
        #expect(throttled > 0, "never throttled: \(stats)")
        _ = try TaskAgent.control(agent, ["cancel", id])
        #expect(Self.finished(agent, id)?["status"] as? String == "cancelled")
        let left = groups.filter { FileManager.default.fileExists(atPath: $0) }
        #expect(left.isEmpty, "the run's groups outlive it: \(left)")
    }

    @Test(.enabled(if: limitsEnforceable && RunCgroupEndToEndTests.controllersMissing))
    func theV1GroupsOfAKilledAgentsRunAreGoneAtItsNextStartAndAllAtItsStop() throws {
        let directory = TestPaths.temporaryDirectory("limits-kill")
        var (agent, _) = try TaskAgent.agent(tasks: Self.tasks(), directory: directory)
        let (groups, agentFolders) = try Self.killWhileSpinning(agent, directory: directory)
        (agent, _) = try TaskAgent.agent(tasks: Self.tasks(), directory: directory)
        // Cleaned before the start goes on: no waiting.
        let left = groups.filter { FileManager.default.fileExists(atPath: $0) }
        #expect(left.isEmpty, "left after the next start: \(left)\n\(agent.transcript)")
        #expect(agent.stop() != nil)
        let folders = agentFolders.filter { FileManager.default.fileExists(atPath: $0) }
        #expect(folders.isEmpty, "the agent's folders outlive its stop: \(folders)")
    }

    @Test(.enabled(if: limitsEnforceable && RunCgroupEndToEndTests.controllersMissing))
    func theV1FoldersOfAKilledAgentAreRemovedByItsForkServerWithoutAnotherStart() throws {
        let directory = TestPaths.temporaryDirectory("limits-orphan")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let (agent, _) = try TaskAgent.agent(tasks: Self.tasks(), directory: directory)
        let (_, agentFolders) = try Self.killWhileSpinning(agent, directory: directory)
        // The fork server, at the end of file on its socket, kills and removes the agent's
        // cgroup, then its v1 folders: no start of the agent follows.
        let deadline = Date().addingTimeInterval(TaskInterruptionEndToEndTests.patience)
        var left = agentFolders
        while !left.isEmpty, Date() < deadline {
            Thread.sleep(forTimeInterval: 0.05)
            left = agentFolders.filter { FileManager.default.fileExists(atPath: $0) }
        }
        #expect(left.isEmpty, "the killed agent's folders are still there: \(left.sorted())\n\(agent.transcript)")
    }

    @Test(.enabled(if: limitsEnforceable && RunCgroupEndToEndTests.controllersMissing))
    func aKilledAgentWithoutV1FoldersRemovesNoneItsEnvironmentNamed() throws {
        // An empty folder of another agent, named in the environment this one inherits (as an
        // agent started by another's worker would): not this agent's to remove.
        let decoy = try #require(CgroupV1Limits.ownFolder("cpu")) + "/agent-decoy-\(getpid())"
        try #require(mkdir(decoy, 0o755) == 0 || errno == EEXIST)
        defer { rmdir(decoy) }
        let directory = TestPaths.temporaryDirectory("limits-inherited")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let (agent, _) = try TaskAgent.agent(tasks: Self.tasks(), directory: directory,
                                             environment: [WorkerCgroup.v1FoldersKey: decoy, "AGENT_CGROUP_V1": "0"])
        let supervisor = agent.process.processIdentifier
        let children = ((try? String(contentsOfFile: "/proc/\(supervisor)/task/\(supervisor)/children", encoding: .utf8)) ?? "").split(separator: " ").compactMap { Int32($0) }
        let server = try #require(children.first { (try? String(contentsOfFile: "/proc/\($0)/cmdline", encoding: .utf8))?.contains("--fork-server") == true },
                                  "no fork server among agent-control's children\n\(agent.transcript)")
        // The run folder's record names it, for the next start to wait for.
        let record = (try? String(contentsOfFile: directory + "/.agent/run/workers", encoding: .utf8)) ?? ""
        #expect(record.contains("\nserver \(server) "), "\(record)")
        #expect(agent.stop(signal: SIGKILL) != nil, "the agent did not die of SIGKILL")
        #expect(!ProcFacts.isAlive(supervisor))
        // Its fork server removes the agent's cgroup, then the v1 folders its environment names,
        // and exits.
        #expect(ProcFacts.survivors(of: [server], within: TaskInterruptionEndToEndTests.patience).isEmpty, "the fork server did not end")
        #expect(FileManager.default.fileExists(atPath: decoy), "the fork server removed a folder another agent's environment named")
    }

    @Test(.enabled(if: limitsEnforceable), arguments: [[:], ["AGENT_TEST_FORK_JOIN": "1"]])
    func aCommandIsInItsRunsCgroupsBeforeItsFirstInstruction(environment: [String: String]) throws {
        let (agent, _) = try TaskAgent.agent(tasks: Self.tasks(), directory: TestPaths.temporaryDirectory("limits-where"),
                                                  environment: environment)
        defer { _ = agent.stop() }
        let id = try RunCgroupEndToEndTests.runID(agent, "where")
        let run = Self.finished(agent, id)
        #expect(run?["status"] as? String == "succeeded", "\(run ?? [:])\n\(agent.transcript)")
        // cat's first read: /proc/self/cgroup, one line per hierarchy (`4:memory:/…/run-<id>-1`).
        let lines = (run?["output"] as? String ?? "").split(separator: "\n").map { $0.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false).map(String.init) }
        let suffix = "/run-\(RunCgroup.safe(id))-1"
        let hierarchies = ["0::"] + (RunCgroupEndToEndTests.controllersMissing ? ["memory", "cpu"] : [])
        for hierarchy in hierarchies {
            let line = lines.first { $0.count == 3 && (hierarchy == "0::" ? $0[0] == "0" : $0[1].split(separator: ",").contains(Substring(hierarchy))) }
            #expect(line?.last?.hasSuffix(suffix) == true, "\(hierarchy): \(line ?? []) in \(run?["output"] ?? "")")
        }
    }
}
