@testable import AgentSupervision
import AgentTestSupport
@testable import AgentWork
import Foundation
import Testing

/// Issue 34 item 4: a command's daemons — `setsid`, even with a cleared environment — end
/// with its run, because every command starts in a cgroup of its own (clone3 into it) before
/// its first instruction. The real agent binary, real commands, real cgroups.
@Suite(.ownThreads) struct RunCgroupEndToEndTests {
    /// Whether this machine lets the agent make a cgroup (v2, writable), as
    /// `EscapedChildrenTests.cgroupsWritable` (AgentSupervisionTests) asks.
    static var cgroupsWritable: Bool {
        CgroupLocation.ownCgroupDirectory().map { access($0, W_OK) == 0 } ?? false
    }

    /// Whether the agent can make cgroups here and hands no memory or cpu controller to runs.
    static var controllersMissing: Bool {
        guard let own = CgroupLocation.ownCgroupDirectory() else { return false }
        let available = (try? String(contentsOfFile: own + "/cgroup.subtree_control", encoding: .utf8)) ?? ""
        return !available.contains("memory") || !available.contains("cpu")
    }

    /// A shell line that starts two daemons — one in a session of its own, one that also
    /// clears its environment — writing their pids to `<prefix>-plain.pid` and
    /// `<prefix>-bare.pid` in the agent's folder, and waits until both have.
    static func daemons(_ prefix: String) -> String {
        "(setsid sh -c 'echo $$ > \(prefix)-plain.pid; exec sleep 1000' &); " +
            "(setsid env -i /bin/sh -c 'echo $$ > \(prefix)-bare.pid; exec sleep 1000' &); " +
            "while [ ! -s \(prefix)-plain.pid ] || [ ! -s \(prefix)-bare.pid ]; do sleep 0.05; done"
    }

    /// The shell line as a JSON string.
    static func quoted(_ line: String) -> String {
        String(decoding: try! JSONSerialization.data(withJSONObject: line, options: .fragmentsAllowed), as: UTF8.self)
    }

    static func tasks() -> String {
        let flaky = "if [ \"$AGENT_TASK_ATTEMPT\" = 1 ]; then (setsid env -i /bin/sh -c 'echo $$ > first.pid; exec sleep 1000' &); " +
            "while [ ! -s first.pid ]; do sleep 0.05; done; exit 1; fi; " +
            "state=$(cut -d' ' -f3 /proc/$(cat first.pid)/stat 2>/dev/null); " +
            "if [ -n \"$state\" ] && [ \"$state\" != Z ]; then echo \"attempt 1's daemon still runs\" >&2; exit 7; fi; echo '{\"clean\": true}'"
        return #"""
            "leaves": {"type": "command", "shell": true, "command": \#(quoted(daemons("leaves") + "; echo '{\"started\": 2}'"))},
            "stays": {"type": "command", "shell": true, "command": \#(quoted(daemons("stays") + "; exec sleep 1000"))},
            "flaky": {"type": "command", "shell": true, "retries": {"max": 1, "initial_delay": 0}, "command": \#(quoted(flaky))},
            "limited": {"type": "command", "command": ["/bin/true"], "limits": {"memory": "64M", "cpu": 0.5}},
            "nests": {"type": "command", "shell": true, "command": \#(quoted(nests))},
            "outlived": {"type": "command", "shell": true, "command": \#(quoted(outlived))}
            """#
    }

    /// A shell line that makes a cgroup inside its run's own (root may) and leaves a daemon in
    /// it, writing the run's cgroup folder to `nests.cgroup` and the daemon's pid to `nests.pid`.
    static let nests = "mnt=$(awk '$3 == \"cgroup2\" { print $2; exit }' /proc/mounts); " +
        "own=$mnt$(awk -F: '$1 == \"0\" { print $3 }' /proc/self/cgroup); mkdir \"$own/inner\" && echo \"$own\" > nests.cgroup && " +
        "(setsid sh -c \"echo \\$\\$ > '$own/inner/cgroup.procs' && echo \\$\\$ > nests.pid && exec sleep 1000\" &) && " +
        "while [ ! -s nests.pid ]; do sleep 0.05; done"

    /// A shell line that starts a daemon in a session of its own and goes on running. The
    /// daemon waits until its parent, a shell, has gone (it is then the agent's child), writes its new
    /// parent's pid to `outlived.parent` and its own to `outlived.pid`, and ends.
    static let outlived = "(setsid sh -c 'parent() { cut -d\" \" -f4 /proc/$$/stat; }; " +
        "while [ \"$(cat /proc/$(parent)/comm)\" = sh ]; do sleep 0.02; done; parent > outlived.parent; echo $$ > outlived.pid' &); exec sleep 1000"

    /// The daemons' pids written as `<prefix>-*.pid` in `directory`, waiting until both are.
    static func daemonPids(_ prefix: String, in directory: String) throws -> [Int32] {
        let deadline = Date().addingTimeInterval(TaskInterruptionEndToEndTests.patience)
        var pids: [Int32] = []
        repeat {
            pids = ["plain", "bare"].compactMap { name in
                (try? String(contentsOfFile: "\(directory)/\(prefix)-\(name).pid", encoding: .utf8))
                    .flatMap { Int32($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
            }
            if pids.count == 2 { return pids }
            Thread.sleep(forTimeInterval: 0.05)
        } while Date() < deadline
        throw Failure(description: "the daemons of \(prefix) never wrote their pids")
    }

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    static func runID(_ agent: AgentRun, _ task: String) throws -> String {
        let started = try TaskAgent.control(agent, ["run", task])
        #expect(started.status == 0, "\(started.stderr)")
        return started.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test(.enabled(if: RunCgroupEndToEndTests.cgroupsWritable)) func aSetsidDaemonEndsWithItsRunEvenWithACleanedEnvironment() throws {
        let directory = TestPaths.temporaryDirectory("run-cgroup-end")
        let (agent, _) = try TaskAgent.agent(tasks: Self.tasks(), directory: directory)
        defer { _ = agent.stop() }
        let id = try Self.runID(agent, "leaves")
        let run = TaskInterruptionEndToEndTests.waitForRun(agent, id) { $0["status"] as? String == "succeeded" }
        #expect(run?["status"] as? String == "succeeded", "\(run ?? [:])\n\(agent.transcript)")
        // Reported only once its cgroup was empty: no waiting here.
        let pids = try Self.daemonPids("leaves", in: directory)
        #expect(!pids.contains(where: AgentRun.isAlive), "alive after the run ended: \(pids.filter(AgentRun.isAlive))")
        // What the run's processes used, from its cgroup.
        let usage = try #require(run?["usage"] as? [String: Any], "\(run ?? [:])")
        #expect((usage["cpu_seconds"] as? Double ?? -1) >= 0, "\(usage)")
        let shown = try TaskAgent.control(agent, ["show", id])
        #expect(shown.stdout.contains("usage: cpu "), "\(shown.stdout)")
    }

    @Test(.enabled(if: RunCgroupEndToEndTests.cgroupsWritable && getuid() == 0))
    func aDaemonInACgroupTheRunMadeInsideItsOwnEndsWithItAndTheirCgroupsGo() throws {
        let directory = TestPaths.temporaryDirectory("run-cgroup-nests")
        let (agent, _) = try TaskAgent.agent(tasks: Self.tasks(), directory: directory)
        defer { _ = agent.stop() }
        let id = try Self.runID(agent, "nests")
        let run = TaskInterruptionEndToEndTests.waitForRun(agent, id) { $0["status"] as? String == "succeeded" }
        #expect(run?["status"] as? String == "succeeded", "\(run ?? [:])\n\(agent.transcript)")
        let pid = try #require(Int32((try? String(contentsOfFile: directory + "/nests.pid", encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines) ?? ""))
        let cgroup = try #require((try? String(contentsOfFile: directory + "/nests.cgroup", encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines))
        #expect(cgroup.contains("/run-\(id)-"), "\(cgroup)")
        #expect(!AgentRun.isAlive(pid), "the daemon in the inner cgroup outlived its run")
        // The run's cgroup is removed with the one inside it.
        let deadline = Date().addingTimeInterval(TaskInterruptionEndToEndTests.patience)
        while access(cgroup, F_OK) == 0, Date() < deadline { Thread.sleep(forTimeInterval: 0.02) }
        #expect(access(cgroup, F_OK) != 0, "\(cgroup) is left: \((try? FileManager.default.contentsOfDirectory(atPath: cgroup).filter { !$0.contains(".") }) ?? [])")
    }

    @Test(.enabled(if: RunCgroupEndToEndTests.cgroupsWritable)) func taskCancelEndsTheDaemonsOfTheRunToo() throws {
        let directory = TestPaths.temporaryDirectory("run-cgroup-cancel")
        let (agent, _) = try TaskAgent.agent(tasks: Self.tasks(), directory: directory)
        defer { _ = agent.stop() }
        let id = try Self.runID(agent, "stays")
        let pids = try Self.daemonPids("stays", in: directory)
        let cancelled = try TaskAgent.control(agent, ["cancel", id])
        #expect(cancelled.status == 0, "\(cancelled.stderr)")
        let run = TaskInterruptionEndToEndTests.waitForRun(agent, id) { $0["status"] as? String == "cancelled" }
        #expect(run?["status"] as? String == "cancelled", "\(run ?? [:])\n\(agent.transcript)")
        #expect((run?["error"] as? String)?.contains("with everything it started") == true)
        #expect(!pids.contains(where: AgentRun.isAlive), "alive after the cancel: \(pids.filter(AgentRun.isAlive))")
    }

    /// The daemons left their run's process group, so the supervisor inherits them (as the
    /// subreaper) and they die as its children when the cancel kills the run's cgroup: they
    /// are reaped, not kept as zombies (a pid each) for as long as the agent runs.
    @Test(.enabled(if: RunCgroupEndToEndTests.cgroupsWritable)) func theDaemonsOfACancelledRunAreReapedNotKeptAsZombies() throws {
        let directory = TestPaths.temporaryDirectory("run-cgroup-zombies")
        let (agent, _) = try TaskAgent.agent(tasks: Self.tasks(), directory: directory)
        defer { _ = agent.stop() }
        let id = try Self.runID(agent, "stays")
        let pids = try Self.daemonPids("stays", in: directory)
        let supervisor = agent.process.processIdentifier
        #expect(pids.allSatisfy { ProcStat.read($0)?.parent == supervisor }, "the daemons are not the supervisor's children: the test shows nothing")
        #expect(try TaskAgent.control(agent, ["cancel", id]).status == 0)
        let run = TaskInterruptionEndToEndTests.waitForRun(agent, id) { $0["status"] as? String == "cancelled" }
        #expect(run?["status"] as? String == "cancelled", "\(run ?? [:])\n\(agent.transcript)")
        let deadline = Date().addingTimeInterval(TaskInterruptionEndToEndTests.patience)
        var kept = pids
        repeat {
            kept = pids.filter { ProcStat.read($0).map { $0.parent == supervisor } == true }
            if kept.isEmpty { break }
            Thread.sleep(forTimeInterval: 0.05)
        } while Date() < deadline
        #expect(kept.isEmpty, "kept as the supervisor's children: \(kept.map { "\($0) \(ProcStat.read($0)?.state ?? "?")" })")
    }

    /// A daemon that dies on its own while its run goes on is the supervisor's child (the
    /// subreaper inherited it) and no longer in its run's cgroup: it is reaped as it dies, not
    /// kept as a zombie until the agent stops.
    @Test(.enabled(if: RunCgroupEndToEndTests.cgroupsWritable)) func aDaemonThatDiesWhileItsRunGoesOnIsReapedNotKeptAsAZombie() throws {
        let directory = TestPaths.temporaryDirectory("run-cgroup-outlived")
        let (agent, _) = try TaskAgent.agent(tasks: Self.tasks(), directory: directory)
        defer { _ = agent.stop() }
        let id = try Self.runID(agent, "outlived")
        let read = { (name: String) in
            (try? String(contentsOfFile: "\(directory)/outlived.\(name)", encoding: .utf8)).flatMap { Int32($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
        }
        let written = Date().addingTimeInterval(TaskInterruptionEndToEndTests.patience)
        while read("pid") == nil, Date() < written { Thread.sleep(forTimeInterval: 0.05) }
        let pid = try #require(read("pid"), "the daemon never wrote its pid\n\(agent.transcript)")
        let supervisor = agent.process.processIdentifier
        #expect(read("parent") == supervisor, "the daemon was not the supervisor's child: the test shows nothing")
        let deadline = Date().addingTimeInterval(TaskInterruptionEndToEndTests.patience)
        while ProcStat.read(pid)?.parent == supervisor, Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
        #expect(ProcStat.read(pid)?.parent != supervisor, "kept as the supervisor's child: \(ProcStat.read(pid)?.state ?? "?")")
        let shown = try TaskAgent.control(agent, ["show", id])
        #expect(shown.stdout.contains("running"), "the run goes on: \(shown.stdout)")
    }

    @Test(.enabled(if: RunCgroupEndToEndTests.cgroupsWritable), arguments: [[:], ["AGENT_FORK_SERVER": "0"]])
    func theDaemonsOfAKilledAgentsRunAreGoneAtItsNextStart(environment: [String: String]) throws {
        let directory = TestPaths.temporaryDirectory("run-cgroup-kill")
        var (agent, _) = try TaskAgent.agent(tasks: Self.tasks(), directory: directory, environment: environment)
        let id = try Self.runID(agent, "stays")
        let pids = try Self.daemonPids("stays", in: directory)
        #expect(TaskFrontTests.waitForCommittedRun(id, status: "running", in: directory))
        #expect(agent.stop(signal: SIGKILL) != nil, "the agent did not die of SIGKILL")
        (agent, _) = try TaskAgent.agent(tasks: Self.tasks(), directory: directory, environment: environment)
        defer { _ = agent.stop() }
        let survivors = ProcFacts.survivors(of: pids, within: TaskInterruptionEndToEndTests.patience)
        #expect(survivors.isEmpty, "alive after the next start: \(survivors)\n\(agent.transcript)")
    }

    @Test(.enabled(if: RunCgroupEndToEndTests.cgroupsWritable)) func aRetryStartsOnlyOnceThePreviousAttemptsCgroupIsEmpty() throws {
        let directory = TestPaths.temporaryDirectory("run-cgroup-retry")
        let (agent, _) = try TaskAgent.agent(tasks: Self.tasks(), directory: directory)
        defer { _ = agent.stop() }
        let id = try Self.runID(agent, "flaky")
        let run = TaskInterruptionEndToEndTests.waitForRun(agent, id) {
            ($0["status"] as? String).flatMap(TaskRun.Status.init(rawValue:))?.isFinished == true
        }
        // Attempt 2 looked for attempt 1's daemon and found it gone.
        #expect(run?["status"] as? String == "succeeded", "\(run ?? [:])\n\(agent.transcript)")
        #expect(run?["attempt"] as? Int == 2)
    }

    @Test(.enabled(if: RunCgroupEndToEndTests.cgroupsWritable && controllersMissing))
    func aTaskWithLimitsFailsWhereTheyCannotBeEnforcedAndTheStartSaysSo() throws {
        // Neither v2's controllers nor (switched off) v1's.
        let (agent, _) = try TaskAgent.agent(tasks: Self.tasks(), environment: ["AGENT_CGROUP_V1": "0"])
        defer { _ = agent.stop() }
        #expect(agent.stderrLines.contains { $0.contains(#"task limits ("limits": memory, cpu) cannot be enforced"#) },
                "\(agent.transcript)")
        let id = try Self.runID(agent, "limited")
        let run = TaskInterruptionEndToEndTests.waitForRun(agent, id) {
            ($0["status"] as? String).flatMap(TaskRun.Status.init(rawValue:))?.isFinished == true
        }
        #expect(run?["status"] as? String == "failed", "\(run ?? [:])")
        let error = run?["error"] as? String ?? ""
        #expect(error.contains("cannot enforce the task's \"limits\" (memory, cpu)") && error.contains("in cgroup v1: AGENT_CGROUP_V1=0")
            && error.contains("remove \"limits\""), "\(error)")
    }

    /// A tampered record's cgroup path is judged as the kernel walks it: `../` followed by a
    /// combining mark holds no `..` as `Character`s, but leaves the hierarchy all the same.
    @Test(.enabled(if: !CgroupLocation.mounts().isEmpty)) func aRecordedCgroupThatWalksUpIsNoAgentsCgroup() throws {
        let mount = try #require(CgroupLocation.mounts().first).mountPoint
        #expect(CgroupLocation.isAgentCgroup(mount + "/agent-1"))
        #expect(!CgroupLocation.isAgentCgroup(mount + "/../agent-1"))
        #expect(!CgroupLocation.isAgentCgroup(mount + "/../\u{301}/agent-1"))
    }
}
