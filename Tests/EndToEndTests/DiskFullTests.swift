import AgentTestSupport
import Foundation
import GRDB
import Testing

/// The store on a disk that fills up for real: a small tmpfs (mounting one needs root, as in
/// the test container; elsewhere the test is skipped and says why).
@Suite(.ownThreads, .serialized) struct DiskFullTests {
    /// An agent started on a full disk could not open its store and ran without it, answering
    /// runs "ok" that its next start had lost, and wrote an empty pidfile that hid it from
    /// `stop`. Both now stop the start, saying why.
    @Test(.enabled(if: TmpfsDisk.canMount, "mounting a tmpfs needs root"))
    func anAgentStartedOnAFullDiskDoesNotStartAndSaysWhy() throws {
        let tmpfs = try TmpfsDisk(size: "4m", name: "start-full")
        defer { tmpfs.unmount() }
        let disk = tmpfs.path
        #expect(tmpfs.fill() > 0)
        let onDisk = try AgentRun(settings: """
        {"enabled_modules": [], "store": {"path": "\(disk)/agent.sqlite"}, "processes": {},
         "tasks": {"quick": {"type": "command", "command": ["/bin/true"]}}}
        """, arguments: ["--no-build", "--quiet"], directory: TestPaths.temporaryDirectory("start-full-store"))
        #expect(onDisk.waitForExit(timeout: 60) == 1, "\(onDisk.transcript)")
        #expect(onDisk.stderrLines.contains { $0.contains("/store: cannot open the store \(disk)/agent.sqlite") }, "\(onDisk.transcript)")

        let pidfile = try AgentRun(settings: #"{"enabled_modules": [], "store": {"enabled": false}, "processes": {}}"#,
                                   arguments: ["--no-build", "--quiet", "--pidfile", disk + "/agent.pid"],
                                   directory: TestPaths.temporaryDirectory("start-full-pidfile"))
        #expect(pidfile.waitForExit(timeout: 60) == 1, "\(pidfile.transcript)")
        #expect(pidfile.stderrLines.contains { $0.contains("cannot write the agent's pid to \(disk)/agent.pid") }, "\(pidfile.transcript)")
    }

    @Test(.enabled(if: TmpfsDisk.canMount, "mounting a tmpfs needs root"))
    func aProcessSavingStateOnAFullDiskKeepsRunningAndSavesAgainOnceThereIsRoom() throws {
        let tmpfs = try TmpfsDisk(size: "8m", name: "disk-full")
        defer { tmpfs.unmount() }
        let (directory, disk) = (tmpfs.directory, tmpfs.path)
        let agent = try AgentRun(settings: """
        {"enabled_modules": ["faults"], "store": {"path": "\(disk)/agent.sqlite"}, "processes": {
          "tick": {"type": "fault", "tick_ms": 50},
          "saver": {"type": "slow_sink", "delay_ms": 0, "save_state": true}}}
        """, arguments: ["--no-build", "--quiet"], directory: directory)
        #expect(agent.waitForLine(onStderr: true) { $0.contains("[saver] saved 10") } != nil, "\(agent.transcript)")

        // The disk fills up: saves are refused, the module is told and goes on.
        #expect(tmpfs.fill() > 0)
        let refused = agent.waitForLine(onStderr: true, timeout: 30) { $0.contains("[saver] not saved") }
        #expect(refused?.contains("the state was not saved: the agent's store cannot write now") == true, "\(agent.transcript)")
        #expect(agent.stderrLines.contains { $0.contains("store: cannot write to") && $0.contains("full") }, "\(agent.transcript)")
        Thread.sleep(forTimeInterval: 1)
        let status = try JSONSerialization.jsonObject(with: Data(runProgram("agent-control", ["status", "--json", "--settings", agent.settingsFile]).stdout.utf8)) as? [String: Any]
        let saver = (status?["processes"] as? [[String: Any]])?.first { $0["name"] as? String == "saver" }
        #expect(saver?["state"] as? String == "running", "\(String(describing: saver))\n\(agent.transcript)")
        #expect(saver?["restarts"] as? Int == 0, "\(String(describing: saver))")
        #expect(!agent.stderrLines.contains { $0.contains("[saver] worker pid") }, "the saver died on a full disk\n\(agent.transcript)")

        // Room again: the next saves are stored.
        let linesBefore = agent.stderrLines.count
        try tmpfs.free()
        let deadline = Date().addingTimeInterval(30)
        var savedAgain: String?
        while savedAgain == nil, Date() < deadline {
            savedAgain = agent.stderrLines.dropFirst(linesBefore).first { $0.contains("[saver] saved ") }
            Thread.sleep(forTimeInterval: 0.05)
        }
        #expect(savedAgain != nil, "no save succeeded after the disk had room again\n\(agent.transcript)")
        #expect(agent.stderrLines.contains { $0.contains("store: writing again") }, "\(agent.transcript)")
        #expect(agent.stop() == 0)
    }

    /// A run that ended while the disk was full was shown `succeeded`, its end kept in memory:
    /// after a `kill -9` it was found `running` and ran again. Its end now goes to the run
    /// journal, in the room the store keeps aside, and the next start writes it: the run ran once.
    @Test(.enabled(if: TmpfsDisk.canMount, "mounting a tmpfs needs root"))
    func aRunThatEndedOnAFullDiskDoesNotRunAgainAfterAKill() throws {
        let tmpfs = try TmpfsDisk(size: "16m", name: "end-kept")
        defer { tmpfs.unmount() }
        let (directory, disk) = (tmpfs.directory, tmpfs.path)
        let ledger = directory + "/ledger", go = directory + "/go"
        let settings = """
        {"enabled_modules": [], "store": {"path": "\(disk)/agent.sqlite"}, "processes": {},
         "tasks": {"once": {"type": "command", "command": ["/bin/sh", "-c", "echo $AGENT_TASK_ATTEMPT >> \(ledger); while [ ! -e \(go) ]; do sleep 0.05; done"]}}}
        """
        let agent = try AgentRun(settings: settings, arguments: ["--no-build", "--quiet"], directory: directory)
        let control = { (arguments: [String]) throws -> [String: Any]? in try Self.control(agent, arguments) }
        var started: String?
        #expect(WorkflowAgent.wait(timeout: 60) { started = (try? control(["task", "run", "once"]))??["id"] as? String; return started != nil }, "\(agent.transcript)")
        let runID = try #require(started)
        #expect(WorkflowAgent.wait(timeout: 60) { (try? String(contentsOfFile: ledger, encoding: .utf8)) == "1\n" }, "\(agent.transcript)")

        #expect(tmpfs.fill() > 0)
        #expect(FileManager.default.createFile(atPath: go, contents: nil))
        #expect(WorkflowAgent.wait(timeout: 60) { (try? control(["task", "show", runID]))??["status"] as? String == "succeeded" }, "\(agent.transcript)")
        // Its end is in the journal (its room), or in the database should SQLite write it into
        // space its files have (a CI run's did, never failing): killed only then.
        #expect(WorkflowAgent.wait(timeout: 60) { Self.end(ofTaskRun: runID, in: disk + "/agent.sqlite") != nil }, "\(agent.transcript)")
        #expect(agent.stop(signal: SIGKILL) != nil)

        try tmpfs.free()
        let again = try AgentRun(settings: settings, arguments: ["--no-build", "--quiet"], directory: directory)
        defer { _ = again.stop() }
        // Its end came from the journal at the open, or from the database, which the room given
        // back may have let write before the kill: either way it is written, once.
        var shown: [String: Any]?
        #expect(WorkflowAgent.wait(timeout: 60) { shown = try? control(["task", "show", runID]); return shown?["status"] != nil }, "\(again.transcript)")
        #expect(shown?["status"] as? String == "succeeded" && shown?["attempt"] as? Int == 1, "\(String(describing: shown))")
        #expect((try? String(contentsOfFile: ledger, encoding: .utf8)) == "1\n", "the run ran again")
    }

    /// `agent-control ARGUMENTS --json` for `agent`'s settings, its answer.
    static func control(_ agent: AgentRun, _ arguments: [String]) throws -> [String: Any]? {
        try JSONSerialization.jsonObject(with: Data(runProgram("agent-control", arguments + ["--json", "--settings", agent.settingsFile]).stdout.utf8)) as? [String: Any]
    }

    /// A run of workflow "gate" of `agent`, once it waits for its signal and the room the
    /// journal's changes go to is kept (before the disk fills): its id.
    static func gateWaiting(_ agent: AgentRun, disk: String) throws -> String {
        var started: String?
        #expect(WorkflowAgent.wait(timeout: 60) { started = (try? control(agent, ["workflow", "run", "gate"]))??["id"] as? String; return started != nil }, "\(agent.transcript)")
        let runID = try #require(started)
        #expect(WorkflowAgent.wait(timeout: 60) {
            ((try? control(agent, ["workflow", "show", runID]))??["run"] as? [String: Any])?["status"] as? String == "waiting"
        }, "\(agent.transcript)")
        let room = disk + "/agent.sqlite-room"
        #expect(WorkflowAgent.wait(timeout: 60) { ((try? FileManager.default.attributesOfItem(atPath: room))?[.size] as? Int ?? 0) > 0 }, "\(agent.transcript)")
        return runID
    }

    /// Where a workflow run's end is kept: "journal" (a change line of the run journal beside
    /// `database`) or "database"; nil while neither has it.
    static func workflowEnd(of runID: String, in database: String) -> String? {
        let journaled = journalLines(beside: database).contains { object in
            let runs = (object["workflow"] as? [String: Any])?["runs"] as? [[String: Any]] ?? []
            return runs.contains { $0["id"] as? String == runID && $0["status"] as? String == "succeeded" }
        }
        return journaled ? "journal" : status(of: runID, in: "workflow_runs", database) == "succeeded" ? "database" : nil
    }

    /// Where a task run's end is kept, as ``workflowEnd(of:in:)`` says a workflow run's.
    static func end(ofTaskRun runID: String, in database: String) -> String? {
        let journaled = journalLines(beside: database).contains { object in
            let run = object["run"] as? [String: Any]
            return run?["id"] as? String == runID && run?["status"] as? String == "succeeded"
        }
        return journaled ? "journal" : status(of: runID, in: "task_runs", database) == "succeeded" ? "database" : nil
    }

    /// The lines of the run journal beside `database`, and of the room kept beside it (up to its zeros).
    static func journalLines(beside database: String) -> [[String: Any]] {
        let room = (try? Data(contentsOf: URL(fileURLWithPath: database + "-room"))) ?? Data()
        let journal = ((try? String(contentsOfFile: database + "-newruns", encoding: .utf8)) ?? "")
            + String(decoding: room.prefix { $0 != 0 }, as: UTF8.self)
        return journal.split(separator: "\n").compactMap { (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any] }
    }

    /// The status `database` has of run `runID` in `table`.
    static func status(of runID: String, in table: String, _ database: String) -> String? {
        var configuration = Configuration()
        configuration.readonly = true
        return try? DatabaseQueue(path: database, configuration: configuration).read {
            try String.fetchOne($0, sql: "SELECT status FROM \(table) WHERE id = ?", arguments: [runID])
        }
    }

    /// A signal answered while the disk was full released its `wait_signal` step in memory
    /// only: after a `kill -9` the run was found waiting for it again, for good. The step's end
    /// (and what the run did after it) now goes to the run journal as a task run's end does.
    @Test(.enabled(if: TmpfsDisk.canMount, "mounting a tmpfs needs root"))
    func aSignalAnsweredOnAFullDiskIsNotLostByAKill() throws {
        let tmpfs = try TmpfsDisk(size: "16m", name: "signal-kept")
        defer { tmpfs.unmount() }
        let (directory, disk) = (tmpfs.directory, tmpfs.path)
        let ledger = directory + "/ledger"
        let settings = """
        {"enabled_modules": [], "store": {"path": "\(disk)/agent.sqlite"}, "processes": {},
         "tasks": {"mark": {"type": "command", "command": ["/bin/sh", "-c", "echo ran >> \(ledger)"]}},
         "workflows": {"gate": {"steps": [{"id": "wait", "wait_signal": {"name": "go"}}, {"id": "after", "task": "mark"}]}}}
        """
        let agent = try AgentRun(settings: settings, arguments: ["--no-build", "--quiet"], directory: directory)
        let control = { (arguments: [String]) throws -> [String: Any]? in try Self.control(agent, arguments) }
        let runID = try Self.gateWaiting(agent, disk: disk)

        #expect(tmpfs.fill() > 0)
        let signalled = try runProgram("agent-control", ["workflow", "signal", runID, "go", "--settings", agent.settingsFile])
        #expect(signalled.status == 0, "\(signalled.stderr)")
        #expect(WorkflowAgent.wait(timeout: 60) { ((try? control(["workflow", "show", runID]))??["run"] as? [String: Any])?["status"] as? String == "succeeded" }, "\(agent.transcript)")
        // Its end is in the journal (or in the database, should SQLite find room in its own
        // files at its retry 5 s later): killed only then.
        #expect(WorkflowAgent.wait(timeout: 60) { Self.workflowEnd(of: runID, in: disk + "/agent.sqlite") != nil }, "\(agent.transcript)")
        #expect(agent.stop(signal: SIGKILL) != nil)
        // Beside the stopped agent, a reader shows what the journal holds of the run.
        let beside = try control(["workflow", "show", runID])
        #expect((beside?["run"] as? [String: Any])?["status"] as? String == "succeeded", "\(String(describing: beside))")
        #expect((beside?["steps"] as? [[String: Any]])?.first?["status"] as? String == "succeeded", "\(String(describing: beside))")
        let listed = try runProgram("agent-control", ["workflow", "runs", "--json", "--settings", agent.settingsFile]).stdout
        let lines = listed.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        #expect(lines.first { $0["id"] as? String == runID }?["status"] as? String == "succeeded", "\(listed)")

        try tmpfs.free()
        let again = try AgentRun(settings: settings, arguments: ["--no-build", "--quiet"], directory: directory)
        defer { _ = again.stop() }
        // Until the new agent answers, agent-control reads the store beside it, which shows a
        // workflow's journaled changes only once the start wrote them: waited for.
        var shown: [String: Any]?
        #expect(WorkflowAgent.wait(timeout: 60) {
            shown = try? control(["workflow", "show", runID])
            return (shown?["run"] as? [String: Any])?["status"] as? String == "succeeded"
        }, "the run lost its signal: \(String(describing: shown))\n\(again.transcript)")
        let steps = (shown?["steps"] as? [[String: Any]])?.map { "\($0["step"] ?? "") \($0["status"] ?? "")" }
        #expect(steps == ["wait succeeded", "after succeeded"], "\(String(describing: shown))")
        #expect((try? String(contentsOfFile: ledger, encoding: .utf8)) == "ran\n", "the step after the signal ran again")
    }

    /// Runs begun while the disk was full (a workflow an event started, its step's task run)
    /// had their first records kept in memory and in the journal without what makes them (the
    /// workflow's definition and input), or not made from their lines: after a `kill -9` the
    /// next start had neither, and a journaled step named a task run the store lacked.
    @Test(.enabled(if: TmpfsDisk.canMount, "mounting a tmpfs needs root"))
    func runsBegunOnAFullDiskAreThereAfterAKill() throws {
        let tmpfs = try TmpfsDisk(size: "16m", name: "begun-kept")
        defer { tmpfs.unmount() }
        let (directory, disk) = (tmpfs.directory, tmpfs.path)
        let ledger = directory + "/ledger"
        // The signal, taken on the full disk, has "gate" publish the event that starts "after".
        let settings = """
        {"enabled_modules": [], "store": {"path": "\(disk)/agent.sqlite"}, "processes": {},
         "tasks": {"mark": {"type": "command", "command": ["/bin/sh", "-c", "echo ran >> \(ledger)"]}},
         "workflows": {"gate": {"steps": [{"id": "wait", "wait_signal": {"name": "go"}}, {"id": "tell", "publish": {"type": "disk.go"}}]},
                       "after": {"on_event": {"type": "disk.go"}, "steps": [{"id": "mark", "task": "mark"}]}}}
        """
        let agent = try AgentRun(settings: settings, arguments: ["--no-build", "--quiet"], directory: directory)
        let control = { (arguments: [String]) throws -> [String: Any]? in try Self.control(agent, arguments) }
        let status = { (id: String) -> String? in ((try? control(["workflow", "show", id]))??["run"] as? [String: Any])?["status"] as? String }
        let gate = try Self.gateWaiting(agent, disk: disk)

        #expect(tmpfs.fill() > 0)
        let signalled = try runProgram("agent-control", ["workflow", "signal", gate, "go", "--settings", agent.settingsFile])
        #expect(signalled.status == 0, "\(signalled.stderr)")
        // "after", begun on the full disk, runs its step and ends.
        var after: String?
        #expect(WorkflowAgent.wait(timeout: 60) {
            let listed = (try? runProgram("agent-control", ["workflow", "runs", "--workflow", "after", "--json", "--settings", agent.settingsFile]).stdout) ?? ""
            after = listed.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
                .first { $0["status"] as? String == "succeeded" }?["id"] as? String
            return after != nil
        }, "\(agent.transcript)")
        let afterID = try #require(after)
        #expect(WorkflowAgent.wait(timeout: 60) { Self.workflowEnd(of: afterID, in: disk + "/agent.sqlite") != nil }, "\(agent.transcript)")
        // The running agent shows the step's task run, which the store could not write (it was
        // answered "no run": a flush through was taken for a write).
        let stepRun = ((try? control(["workflow", "show", afterID]))??["steps"] as? [[String: Any]])?.first?["task_run"] as? String
        let shownRunning = stepRun.flatMap { (try? control(["task", "show", $0])) ?? nil }
        #expect(shownRunning?["status"] as? String == "succeeded", "\(String(describing: stepRun)): \(String(describing: shownRunning))")
        #expect(agent.stop(signal: SIGKILL) != nil)

        try tmpfs.free()
        let again = try AgentRun(settings: settings, arguments: ["--no-build", "--quiet"], directory: directory)
        defer { _ = again.stop() }
        var shown: [String: Any]?
        #expect(WorkflowAgent.wait(timeout: 60) {
            shown = try? control(["workflow", "show", afterID])
            return (shown?["run"] as? [String: Any])?["status"] as? String == "succeeded"
        }, "the run begun on the full disk was lost: \(String(describing: shown))\n\(again.transcript)")
        let step = (shown?["steps"] as? [[String: Any]])?.first
        #expect(step?["status"] as? String == "succeeded", "\(String(describing: shown))")
        let taskRun = try #require(step?["task_run"] as? String, "\(String(describing: shown))")
        var task: [String: Any]?
        #expect(WorkflowAgent.wait(timeout: 60) { task = try? control(["task", "show", taskRun]); return task?["status"] != nil }, "\(again.transcript)")
        #expect(task?["status"] as? String == "succeeded", "the step's task run, begun on the full disk: \(String(describing: task))")
        #expect(WorkflowAgent.wait(timeout: 60) { status(gate) == "succeeded" }, "\(again.transcript)")
        #expect((try? String(contentsOfFile: ledger, encoding: .utf8)) == "ran\n", "the step ran again")
    }

    /// An 8 MiB disk with less free than the journal's room needs (2 MiB and a MiB more): the
    /// room is not kept, and the log says so. The ballast (`ballast` on the disk) stays until
    /// the test removes it.
    static func diskWithoutRoomForTheRoom(_ name: String) throws -> TmpfsDisk {
        let tmpfs = try TmpfsDisk(size: "8m", name: name)
        var facts = statvfs()
        #expect(statvfs(tmpfs.path, &facts) == 0)
        let free = Int(facts.f_bavail) * Int(facts.f_frsize)
        #expect(FileManager.default.createFile(atPath: tmpfs.path + "/ballast", contents: Data(count: free - (2 << 20))))
        return tmpfs
    }

    /// Whether `agent`'s store says it cannot write (`status`: store.degraded) within a minute,
    /// the disk being full: a write it cannot make (a command's audit line) makes it say so.
    static func waitUntilTheStoreCannotWrite(_ agent: AgentRun) -> Bool {
        WorkflowAgent.wait(timeout: 60) {
            _ = try? runProgram("agent-control", ["workflow", "cancel", "wf-none", "--settings", agent.settingsFile])
            let status = try? runProgram("agent-control", ["status", "--json", "--settings", agent.settingsFile]).stdout
            let shown = status.flatMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
            return (shown?["store"] as? [String: Any])?["degraded"] is String
        }
    }

    /// A person's answer and a cancel were taken on a full disk when nothing kept the run's
    /// end (the room could not be kept): a kill then had the run wait for its person again, or
    /// go on. They are refused, as a signal is, and taken once the store writes again.
    @Test(.enabled(if: TmpfsDisk.canMount, "mounting a tmpfs needs root"))
    func aPersonsAnswerAndACancelNothingWouldKeepAreRefusedOnAFullDisk() throws {
        let tmpfs = try Self.diskWithoutRoomForTheRoom("person-refused")
        defer { tmpfs.unmount() }
        let (directory, disk) = (tmpfs.directory, tmpfs.path)
        // A person executor is an HTTP user's.
        let settings = """
        {"enabled_modules": [], "store": {"path": "\(disk)/agent.sqlite"},
         "http": {"listen": "127.0.0.1:0", "tokens": ["${env:AGENT_API_TOKEN}"], "users": {"alice": {"password_hash": "\(try APIAgent.hash("a long password of alice's"))"}}},
         "processes": {"alice": {"type": "executor", "user": "alice", "max_concurrent": 2, "tasks": {"review": {}}}},
         "tasks": {"review": {"type": "command", "command": ["/bin/true"], "max_concurrent": 2}}}
        """
        let agent = try AgentRun(settings: settings, arguments: ["--no-build", "--quiet"],
                                 environment: ["AGENT_API_TOKEN": "a-token-of-at-least-32-characters-0123456789"], directory: directory)
        defer { _ = agent.stop() }
        let control = { (arguments: [String]) throws -> ProgramResult in
            try runProgram("agent-control", arguments + ["--settings", agent.settingsFile])
        }
        let status = { (id: String) -> String? in
            ((try? JSONSerialization.jsonObject(with: Data(control(["task", "show", id, "--json"]).stdout.utf8))) as? [String: Any])?["status"] as? String
        }
        var ids: [String] = []
        #expect(WorkflowAgent.wait(timeout: 60) {
            let started = try? JSONSerialization.jsonObject(with: Data(control(["task", "run", "review", "--json"]).stdout.utf8)) as? [String: Any]
            if let id = started?["id"] as? String { ids.append(id) }
            return ids.count == 2
        }, "\(agent.transcript)")
        try #require(ids.count == 2)
        #expect(WorkflowAgent.wait(timeout: 60) { ids.allSatisfy { status($0) == "running" } }, "\(agent.transcript)")
        #expect(agent.waitForLine(onStderr: true, timeout: 60) { $0.contains("cannot keep 2 MiB aside") } != nil, "\(agent.transcript)")

        #expect(tmpfs.fill() > 0)
        #expect(Self.waitUntilTheStoreCannotWrite(agent), "\(agent.transcript)")
        let completed = try control(["task", "complete", ids[0], "--output", #"{"ok": true}"#])
        #expect(completed.status != 0 && completed.stderr.contains("the store cannot write now, so the run was not completed"), "\(completed)")
        let cancelled = try control(["task", "cancel", ids[1]])
        #expect(cancelled.status != 0 && cancelled.stderr.contains("the store cannot write now, so the run was not cancelled"), "\(cancelled)")
        #expect(ids.allSatisfy { status($0) == "running" }, "a refused answer or cancel changed its run")

        // Room again (the ballast too: the database's own growth would fill what it leaves).
        try tmpfs.free()
        try FileManager.default.removeItem(atPath: disk + "/ballast")
        #expect(WorkflowAgent.wait(timeout: 60) { (try? control(["task", "complete", ids[0], "--output", #"{"ok": true}"#]))?.status == 0 }, "\(agent.transcript)")
        var cancel: ProgramResult?
        #expect(WorkflowAgent.wait(timeout: 60) { cancel = try? control(["task", "cancel", ids[1]]); return cancel?.status == 0 },
                "\(String(describing: cancel))\n\(agent.transcript)")
        #expect(WorkflowAgent.wait(timeout: 60) { status(ids[0]) == "succeeded" && status(ids[1]) == "cancelled" }, "\(agent.transcript)")
    }

    /// A signal was answered "taken" on a full disk when nothing kept it: the room could not
    /// be kept (the agent started with less than its 2 MiB and a MiB more free), and a kill then
    /// lost it. It is refused now, as a new run is, and taken once the store writes again.
    @Test(.enabled(if: TmpfsDisk.canMount, "mounting a tmpfs needs root"))
    func aSignalNothingWouldKeepIsRefusedOnAFullDisk() throws {
        let tmpfs = try Self.diskWithoutRoomForTheRoom("signal-refused")
        defer { tmpfs.unmount() }
        let (directory, disk) = (tmpfs.directory, tmpfs.path)
        let settings = """
        {"enabled_modules": [], "store": {"path": "\(disk)/agent.sqlite"}, "processes": {},
         "workflows": {"gate": {"steps": [{"id": "wait", "wait_signal": {"name": "go"}}]}}}
        """
        let agent = try AgentRun(settings: settings, arguments: ["--no-build", "--quiet"], directory: directory)
        defer { _ = agent.stop() }
        let control = { (arguments: [String]) throws -> [String: Any]? in try Self.control(agent, arguments) }
        var started: String?
        #expect(WorkflowAgent.wait(timeout: 60) { started = (try? control(["workflow", "run", "gate"]))??["id"] as? String; return started != nil }, "\(agent.transcript)")
        let runID = try #require(started)
        #expect(agent.waitForLine(onStderr: true, timeout: 60) { $0.contains("cannot keep 2 MiB aside") } != nil, "\(agent.transcript)")

        #expect(tmpfs.fill() > 0)
        // The signal then finds nothing to keep it.
        #expect(Self.waitUntilTheStoreCannotWrite(agent), "\(agent.transcript)")
        // Refused (should a retry of the store's find room in its own files and write, one may
        // be taken or answered not kept: the attempts go on until the refusal, none taken).
        var refused: ProgramResult?
        var answers: [String] = []
        #expect(WorkflowAgent.wait(timeout: 60) {
            refused = try? runProgram("agent-control", ["workflow", "signal", runID, "go", "--settings", agent.settingsFile])
            answers.append(refused.map { "\($0.status) \($0.stdout)\($0.stderr)" } ?? "nil")
            return refused?.stderr.contains("the store cannot write now, so the signal was not taken") == true
        }, "\(answers)\n\(agent.transcript)")
        #expect(!answers.contains { $0.hasPrefix("0 ") }, "a signal was taken on the full disk: \(answers)")

        try tmpfs.free()
        var taken: ProgramResult?
        #expect(WorkflowAgent.wait(timeout: 60) {
            taken = try? runProgram("agent-control", ["workflow", "signal", runID, "go", "--settings", agent.settingsFile])
            return taken?.status == 0
        }, "\(String(describing: taken))\n\(agent.transcript)")
        #expect(WorkflowAgent.wait(timeout: 60) { ((try? control(["workflow", "show", runID]))??["run"] as? [String: Any])?["status"] as? String == "succeeded" })
    }
}
