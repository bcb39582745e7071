@testable import AgentStore
import AgentTestSupport
@testable import AgentWork
import Foundation
import JSONSchema
import Logging
import Testing

/// Acknowledged means durable, on a disk that fills up for real (a small tmpfs the test fills
/// and frees; mounting needs root, and the tests fail, saying so, where it is not permitted).
@Suite(.ownThreads, .serialized) struct AcknowledgedWorkTests {
    static func commitNew(_ store: SQLiteRunStore, _ run: TaskRun) async -> Bool {
        await withCheckedContinuation { continuation in store.commitNew([run]) { continuation.resume(returning: $0) } }
    }

    @Test func newRunsAreRefusedOnAFullDiskAndChangesOfAcknowledgedRunsAreWrittenOnceThereIsRoom() async throws {
        let disk = try TmpfsDisk(size: "8m", name: "acknowledged")
        defer { disk.unmount() }
        let logger = Logger(label: "test")
        let store = try AgentStore(path: disk.path + "/agent.sqlite", settings: StoreSettings(), logger: logger)
        let runs = try SQLiteRunStore(store: store)
        var first = TaskRun(id: "r-1", task: "t", requestedBy: .cli)
        #expect(await Self.commitNew(runs, first))

        // The disk fills: new runs are written until the store cannot write, then refused.
        #expect(disk.fill() > 0)
        let big = JSONValue.string(String(repeating: "x", count: 32 << 10))
        var acknowledged = ["r-1"]
        var refused: String?
        for n in 2...400 where refused == nil {
            let run = TaskRun(id: "r-\(n)", task: "t", input: ["pad": big], requestedBy: .cli)
            if await Self.commitNew(runs, run) { acknowledged.append(run.id) } else { refused = run.id }
        }
        let refusedID = try #require(refused, "the store never refused a new run on a full disk")
        #expect(store.statistics.degraded?.contains("full") == true, "\(store.statistics)")

        // An acknowledged run finishes meanwhile: its change is kept, not dropped.
        first.status = .succeeded
        first.endedAt = Date().timeIntervalSince1970
        runs.record(first)
        #expect(WorkflowAgent.wait(timeout: 60) { store.statistics.retained >= 1 }, "the finished run's change was not kept: \(store.statistics)")

        // Room again: the kept change is written, and nothing refused appears.
        try disk.free()
        #expect(WorkflowAgent.wait(timeout: 60) { store.statistics.retained == 0 && store.statistics.degraded == nil }, "\(store.statistics)")
        #expect(store.statistics.lostChanges == 0)
        store.close()
        let reopened = try AgentStore(path: disk.path + "/agent.sqlite", settings: StoreSettings(), logger: logger)
        defer { reopened.close() }
        let stored = try SQLiteRunStore(store: reopened)
        #expect(try await stored.run(id: "r-1")?.status == .succeeded)
        for id in acknowledged { #expect(try await stored.run(id: id) != nil, "acknowledged run \(id) is gone") }
        #expect(try await stored.run(id: refusedID) == nil, "a refused run was written")
    }

    static func whenKept(_ store: SQLiteRunStore, _ id: String) async -> Bool {
        await withCheckedContinuation { continuation in store.whenKept(id) { continuation.resume(returning: $0) } }
    }

    /// Whoever answers a person's `task complete` or a `task cancel` waits to know whether the
    /// run's change is written, or kept in the journal's room where a kill does not lose it;
    /// on a disk that had no room for the room, it is neither, and they are told so.
    @Test func whoWaitsForARunsChangeIsToldWhetherItIsWrittenKeptOrNeither() async throws {
        for roomKept in [true, false] {
            let disk = try TmpfsDisk(size: "8m", name: roomKept ? "kept-told" : "unkept-told")
            defer { disk.unmount() }
            if !roomKept {
                // Less free than the room needs (2 MiB and a MiB more): it is not kept.
                var facts = statvfs()
                #expect(statvfs(disk.path, &facts) == 0)
                let free = Int(facts.f_bavail) * Int(facts.f_frsize)
                #expect(FileManager.default.createFile(atPath: disk.path + "/ballast", contents: Data(count: free - (2 << 20))))
            }
            let store = try AgentStore(path: disk.path + "/agent.sqlite", settings: StoreSettings(), logger: Logger(label: "test"))
            defer { store.close() }
            let runs = try SQLiteRunStore(store: store)
            var run = TaskRun(id: "r-1", task: "t", requestedBy: .cli)
            #expect(await Self.commitNew(runs, run))
            run.status = .running
            run.attempt = 1
            runs.record(run)
            #expect(await Self.whenKept(runs, "r-1"), "a change written was told not kept")

            #expect(disk.fill() > 0)
            run.status = .succeeded
            run.endedAt = Date().timeIntervalSince1970
            runs.record(run)
            let kept = await Self.whenKept(runs, "r-1")
            #expect(store.statistics.degraded?.contains("full") == true, "\(store.statistics)")
            #expect(kept == roomKept, "room kept: \(roomKept); told kept: \(kept)")
            // A run with no change waiting has nothing unkept.
            #expect(await Self.whenKept(runs, "r-other"))
        }
    }

    /// A workflow run begun on a full disk (an event's) is kept in the room with its definition
    /// and input on its first line alone (each line carried them, up to a MiB each, and a few
    /// runs filled the room). One whose first line does not fit is not kept, nor are its steps'
    /// task runs: made alone at the next start, one ran for a run never made (an adversary's).
    @Test func aWorkflowRunBegunOnAFullDiskIsKeptOnceWithItsStepsRunsAndNotAtAllWithoutThem() async throws {
        let disk = try TmpfsDisk(size: "8m", name: "begun-room")
        defer { disk.unmount() }
        let path = disk.path + "/agent.sqlite"
        let logger = Logger(label: "test")
        do {
            let store = try AgentStore(path: path, settings: StoreSettings(), logger: logger)
            defer { store.close() }
            let runs = try SQLiteRunStore(store: store)
            let workflows = try SQLiteWorkflowStore(store: store)
            #expect(await Self.commitNew(runs, TaskRun(id: "r-0", task: "t", requestedBy: .cli)))
            #expect(disk.fill() > 0)
            func commit(_ run: WorkflowRun) async -> WorkflowCommitOutcome {
                await withCheckedContinuation { continuation in
                    workflows.commit(WorkflowCommit(runs: [run], unstored: [run.id])) { continuation.resume(returning: $0) }
                }
            }
            func stepRun(of workflowRun: String) -> TaskRun {
                var run = TaskRun(id: "task-of-\(workflowRun)", task: "t", requestedBy: .workflow)
                run.idempotencyKey = "\(workflowRun)/step/1"
                return run
            }
            var small = WorkflowJournalTests.run("small", .running, revision: 1)
            #expect(await commit(small) == .kept)
            small.revision = 2
            #expect(await commit(small) == .kept)
            // Over the room's 2 MiB: not kept.
            var huge = WorkflowJournalTests.run("huge", .running, revision: 1)
            huge.input = ["pad": .string(String(repeating: "x", count: 3 << 20))]
            #expect(await commit(huge) == .failed)
            runs.record(stepRun(of: "small"))
            runs.record(stepRun(of: "huge"))
            #expect(await Self.whenKept(runs, "task-of-small"))
            #expect(await !Self.whenKept(runs, "task-of-huge"), "the task run of a workflow run not kept was kept")

            let room = try Data(contentsOf: URL(fileURLWithPath: RunJournal.roomPath(for: RunJournal.path(for: path))))
            let lines = String(decoding: room.prefix { $0 != 0 }, as: UTF8.self).split(separator: "\n")
            let smallLines = lines.filter { $0.contains(#""id":"small""#) }
            #expect(smallLines.count == 2 && smallLines[0].contains("ticket") && !smallLines[1].contains("ticket"),
                    "the first line alone carries the input: \(smallLines)")
            #expect(!lines.contains { $0.contains("task-of-huge") })
        }
        try disk.free()
        let reopened = try AgentStore(path: path, settings: StoreSettings(), logger: logger)
        defer { reopened.close() }
        let reader = try AgentStore.readOnlyQueue(path: path)
        let small = try SQLiteWorkflowStore.run(id: "small", reader: reader)?.run
        #expect(small?.revision == 2 && small?.input == ["ticket": 7], "\(String(describing: small))")
        #expect(try SQLiteRunStore.readRun(id: "task-of-small", reader: reader) != nil)
        #expect(try SQLiteWorkflowStore.run(id: "huge", reader: reader) == nil)
        #expect(try SQLiteRunStore.readRun(id: "task-of-huge", reader: reader) == nil, "a step's task run was made without its workflow run")
    }

    /// A run's end the store cannot write (the disk full) is also written to the room the run
    /// journal keeps of the disk: the agent stopping (or killed) before the disk has room does
    /// not lose it — the next open writes it, with its attempt — where the run used to be found
    /// `running` and run again.
    @Test func aRunsEndOnAFullDiskIsKeptInTheJournalsRoomAndWrittenAtTheNextOpen() async throws {
        let disk = try TmpfsDisk(size: "8m", name: "kept-end")
        defer { disk.unmount() }
        let logger = Logger(label: "test")
        let path = disk.path + "/agent.sqlite"
        let store = try AgentStore(path: path, settings: StoreSettings(), logger: logger)
        let runs = try SQLiteRunStore(store: store)
        var run = TaskRun(id: "r-1", task: "t", requestedBy: .cli)
        #expect(await Self.commitNew(runs, run))
        #expect(WorkflowAgent.wait(timeout: 60) { (try? RunJournal.unwritten(path: RunJournal.path(for: path), reader: AgentStore.readOnlyQueue(path: path)))?.isEmpty == true })

        #expect(disk.fill() > 0)
        let now = Date().timeIntervalSince1970
        var attempt = TaskAttempt(number: 1, startedAt: now - 1)
        var outcome = TaskRunOutcome(status: .succeeded, exitCode: 0)
        outcome.stdoutTail = "done\n"
        attempt.end(outcome, at: now)
        run.status = .succeeded
        run.attempt = 1
        run.startedAt = now - 1
        run.endedAt = now
        run.attemptRecord = attempt
        runs.record(run)
        #expect(WorkflowAgent.wait(timeout: 60) { store.statistics.retained >= 1 }, "the end was not kept: \(store.statistics)")
        #expect(store.statistics.degraded?.contains("full") == true, "\(store.statistics)")
        // The running agent reads the end from the journal, not the store's older record (one
        // memory let go of was shown still running).
        #expect(try await runs.run(id: "r-1")?.status == .succeeded)
        #expect(try await runs.list(RunFilter()).runs.map { "\($0.run.id) \($0.run.status.rawValue)" } == ["r-1 succeeded"])
        #expect(try await runs.attempts(of: "r-1").map(\.status) == [.succeeded])
        // Whatever fills the disk again before the store tries again takes none of the room.
        #expect(disk.fill() > 0)
        // Stopped with the disk still full: the database never got the end.
        store.close()
        let before = try AgentStore.readOnlyQueue(path: path)
        #expect(try SQLiteRunStore.readRun(id: "r-1", reader: before)?.status == .queued)
        // Beside the stopped agent, a reader sees the end the journal holds.
        #expect(try RunJournal.unwritten(path: RunJournal.path(for: path), reader: before).last?.status == .succeeded)

        try disk.free()
        let reopened = try AgentStore(path: path, settings: StoreSettings(), logger: logger)
        defer { reopened.close() }
        let stored = try SQLiteRunStore(store: reopened)
        #expect(try await stored.run(id: "r-1")?.status == .succeeded)
        let attempts = try await stored.attempts(of: "r-1")
        #expect(attempts.map(\.status) == [.succeeded] && attempts.first?.stdoutTail == "done\n", "\(attempts)")
    }

    /// The room keeps its blocks allocated and the lines go into them: given back on a full
    /// disk as first built, the store's own retry took them, and the next full spell found no
    /// room (an adversary's signal answered then was lost by a kill), as did a program filling
    /// the disk at once. Here the disk fills twice, the store writes in between, and whatever
    /// fills the disk gets nothing of the room.
    @Test func theRoomKeepsItsBlocksThroughFullSpellsAndWhatFillsTheDiskGetsNoneOfThem() async throws {
        let disk = try TmpfsDisk(size: "8m", name: "room-kept")
        defer { disk.unmount() }
        let logger = Logger(label: "test")
        let path = disk.path + "/agent.sqlite"
        var settings = StoreSettings()
        settings.commitInterval = 0.05
        let store = try AgentStore(path: path, settings: settings, logger: logger)
        let runs = try SQLiteRunStore(store: store)
        func ended(_ id: String) -> TaskRun {
            var run = TaskRun(id: id, task: "t", requestedBy: .cli)
            run.status = .succeeded
            run.attempt = 1
            run.endedAt = Date().timeIntervalSince1970
            return run
        }
        for id in ["r-1", "r-2"] { #expect(await Self.commitNew(runs, TaskRun(id: id, task: "t", requestedBy: .cli))) }
        let room = RunJournal.roomPath(for: RunJournal.path(for: path))
        #expect(WorkflowAgent.wait(timeout: 60) { ((try? FileManager.default.attributesOfItem(atPath: room))?[.size] as? Int ?? 0) == 2 << 20 })

        // First spell: r-1's end goes into the room; a MiB is freed and the store writes it.
        let first = disk.fill()
        #expect(first > 0)
        runs.record(ended("r-1"))
        #expect(WorkflowAgent.wait(timeout: 60) { store.statistics.retained >= 1 }, "\(store.statistics)")
        #expect(truncate(disk.filler, off_t(first - (1 << 20))) == 0)
        #expect(WorkflowAgent.wait(timeout: 60) { store.statistics.retained == 0 && store.statistics.degraded == nil }, "\(store.statistics)")
        // Second spell: what fills the disk gets at most that MiB, nothing of the room.
        let fd = open(disk.path + "/filler-2", O_WRONLY | O_CREAT | O_CLOEXEC, 0o600)
        let block = [UInt8](repeating: 0x5A, count: 64 << 10)
        var second = 0
        while true {
            let n = block.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            if n <= 0 { break }
            second += n
        }
        close(fd)
        #expect(second <= 1 << 20, "the second fill took \(second) bytes: the room was taken")
        runs.record(ended("r-2"))
        #expect(WorkflowAgent.wait(timeout: 60) { store.statistics.retained >= 1 }, "\(store.statistics)")
        store.close()
        let reader = try AgentStore.readOnlyQueue(path: path)
        #expect(try SQLiteRunStore.readRun(id: "r-2", reader: reader)?.status == .queued)
        #expect(try RunJournal.unwritten(path: RunJournal.path(for: path), reader: reader).map(\.id) == ["r-2"], "r-2's end is not in the room")

        // Started again on the still-full disk: the room gives back what it holds past its line,
        // and the open writes the line.
        let reopened = try AgentStore(path: path, settings: StoreSettings(), logger: logger)
        defer { reopened.close() }
        #expect(try SQLiteRunStore.readRun(id: "r-1", reader: reader)?.status == .succeeded)
        #expect(try SQLiteRunStore.readRun(id: "r-2", reader: reader)?.status == .succeeded)
        #expect(!DiskRoom.holdsLines(at: room), "the room's lines were not cleared once written")
    }

    /// `agent-control task|workflow ARGUMENTS --json --settings …` as JSON (nil: not JSON).
    static func control(_ agent: WorkflowAgent, _ arguments: [String]) throws -> (status: Int32, json: JSONValue?, text: String) {
        let result = try runProgram("agent-control", arguments + ["--json", "--settings", agent.run.settingsFile], timeout: 120)
        return (result.status, try? JSONValue.parse(Data(result.stdout.utf8)), result.stdout + result.stderr)
    }

    /// The agent's `status` of its store.
    static func storeStatus(_ agent: WorkflowAgent) throws -> JSONValue? {
        try JSONValue.parse(Data(runProgram("agent-control", ["status", "--json", "--settings", agent.run.settingsFile]).stdout.utf8))["store"]
    }

    /// Repeats `request` until it is refused (at most 300 times): the ids it was answered with.
    static func untilRefused(_ request: () throws -> (id: String?, refusal: String?)) rethrows -> (ids: [String], refusal: String?) {
        var ids: [String] = []
        for _ in 0..<300 {
            let answer = try request()
            if let refusal = answer.refusal { return (ids, refusal) }
            if let id = answer.id { ids.append(id) }
        }
        return (ids, nil)
    }

    @Test func requestsAreRefusedWhileTheDiskIsFullAndNothingAcknowledgedIsLostAcrossARestart() throws {
        let disk = try TmpfsDisk(size: "8m", name: "acknowledged")
        defer { disk.unmount() }
        let gate = disk.directory + "/open"
        let settings = #"""
            {"enabled_modules": [], "processes": {}, "store": {"path": "\#(disk.path)/agent.sqlite"},
             "http": {"listen": "127.0.0.1:0", "tokens": [{"token": "${env:OPS_TOKEN}", "name": "ops"}]},
             "tasks": {"later": {"type": "command", "command": ["/bin/true"]},
                       "gate": {"type": "command", "command": "while [ ! -e \#(gate) ]; do sleep 0.05; done; echo opened", "shell": true, "max_concurrent": 4}},
             "workflows": {"gated": {"steps": [{"id": "wait", "task": "gate"}]}}}
            """#
        try FileManager.default.createDirectory(atPath: disk.directory + "/agent", withIntermediateDirectories: true)
        var agent = try WorkflowAgent.start(settings, directory: disk.directory + "/agent")
        var later = [try #require(Self.control(agent, ["task", "run", "later", "--at", "30m"]).json?["id"]?.stringValue)]
        let gated = try #require(Self.control(agent, ["task", "run", "gate"]).json?["id"]?.stringValue)
        let workflow = try #require(Self.control(agent, ["workflow", "run", "gated"]).json?["id"]?.stringValue)

        // The disk fills: requests are answered while the store still writes them, then refused.
        #expect(disk.fill() > 0)
        let cli = try Self.untilRefused {
            let answer = try Self.control(agent, ["task", "run", "later", "--at", "30m"])
            return (answer.json?["id"]?.stringValue, answer.status == 0 ? nil : answer.text)
        }
        later += cli.ids
        #expect(cli.refusal?.contains("the store cannot write now, so the run of task \"later\" was not queued") == true, "\(cli)\n\(agent.run.transcript)")
        let http = try Self.untilRefused {
            let answer = try agent.http("POST", "/api/tasks/later/run", body: #"{"at": "30m"}"#)
            guard answer.status == 503 else { return ((answer.json["run"] as? [String: Any])?["id"] as? String, nil) }
            #expect(answer.headers["retry-after"] == "5", "\(answer.headers)")
            return (nil, answer.body)
        }
        later += http.ids
        #expect(http.refusal?.contains("\"code\":\"unavailable\"") == true, "\(http)")
        var workflows = [workflow]
        let refusedWorkflow = try Self.untilRefused {
            let answer = try Self.control(agent, ["workflow", "run", "gated"])
            return (answer.json?["id"]?.stringValue, answer.status == 0 ? nil : answer.text)
        }
        workflows += refusedWorkflow.ids
        #expect(refusedWorkflow.refusal?.contains("the store cannot write now, so the workflow run was not started") == true, "\(refusedWorkflow)")

        // Acknowledged runs finish while the disk is full: their results are kept, counted.
        #expect(FileManager.default.createFile(atPath: gate, contents: Data()))
        #expect(WorkflowAgent.wait(timeout: 60) { (try? Self.storeStatus(agent)?["retained"]?.numberValue?.intValue ?? 0) ?? 0 > 0 },
                "no change was kept while the disk was full: \(String(describing: try? Self.storeStatus(agent)))")
        #expect(WorkflowAgent.wait(timeout: 60) { (try? Self.control(agent, ["task", "show", gated]).json?["status"]?.stringValue) == "succeeded" })

        // Room again: what was kept is written; after a restart every acknowledged run is there.
        try disk.free()
        #expect(WorkflowAgent.wait(timeout: 60) {
            guard let store = try? Self.storeStatus(agent) else { return false }
            return store["degraded"] == nil && store["retained"]?.numberValue?.intValue == 0
        }, "\(String(describing: try? Self.storeStatus(agent)))")
        #expect(WorkflowAgent.wait(timeout: 60) { workflows.allSatisfy { (try? Self.control(agent, ["workflow", "show", $0]).json?["run"]?["status"]?.stringValue) == "succeeded" } })
        #expect(agent.run.stop() == 0)
        agent = try WorkflowAgent.start(nil, directory: disk.directory + "/agent")
        defer { _ = agent.run.stop() }
        #expect(try Self.control(agent, ["task", "show", gated]).json?["status"]?.stringValue == "succeeded")
        for id in workflows {
            #expect(try Self.control(agent, ["workflow", "show", id]).json?["run"]?["status"]?.stringValue == "succeeded", "workflow run \(id)")
        }
        for id in later {
            #expect(try Self.control(agent, ["task", "show", id]).json?["status"]?.stringValue == "queued", "run \(id) is gone")
        }
        // Nothing refused was queued after all.
        let stored = try runProgram("agent-control", ["task", "runs", "--task", "later", "--limit", "10000", "--json", "--settings", agent.run.settingsFile])
        #expect(stored.stdout.split(separator: "\n").count == later.count, "\(stored.stdout)")
    }

    @Test func keptChangesAreBoundedFoldedByRunAndCounted() {
        var kept = RetainedWrites(limit: 3)
        var run = TaskRun(id: "a", task: "t", requestedBy: .cli)
        kept.keep(runs: [run, TaskRun(id: "b", task: "t", requestedBy: .cli)], workflows: [])
        run.status = .succeeded
        #expect(kept.keep(runs: [run], workflows: []) == 0)
        #expect(kept.runs.map(\.id) == ["b", "a"])
        #expect(kept.runs.last?.status == .succeeded)
        #expect(kept.keep(runs: [TaskRun(id: "c", task: "t", requestedBy: .cli), TaskRun(id: "d", task: "t", requestedBy: .cli)], workflows: []) == 1)
        #expect(kept.runs.map(\.id) == ["a", "c", "d"])
        #expect(kept.lost == 1)
    }
}
