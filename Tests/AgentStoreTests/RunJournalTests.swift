import AgentBase
@testable import AgentLoop
@testable import AgentStore
import AgentTestSupport
@testable import AgentWork
import Foundation
import GRDB
import JSONSchema
import Logging
import Synchronization
import Testing

/// A new run a request waits for is made durable by a line in the run journal, not by a
/// transaction of its own; what a crash leaves in the journal is written at the next open,
/// and nothing the store wrote before is written again. A crash is the files as they are
/// while the writer waits (copied aside), since the commit interval here outlasts the test.
@Suite(.ownThreads, .serialized) struct RunJournalTests {
    /// A store whose group commit waits longer than the test: only a new run's own
    /// transaction, a reader's wait or the close writes anything.
    static func store(_ folder: String, synchronous: String = "normal") throws -> AgentStore {
        var settings = StoreSettings()
        settings.commitInterval = 600
        settings.synchronous = synchronous
        return try AgentStore(path: folder + "/agent.sqlite", settings: settings, logger: Logger(label: "test"))
    }

    /// The database, its WAL and its run journal copied into `folder`: what a SIGKILL would
    /// leave (the writer is asleep, so the files are what it committed).
    static func crashCopy(of store: AgentStore, into folder: String) throws -> String {
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        for suffix in ["", "-wal", "-newruns"] where FileManager.default.fileExists(atPath: store.path + suffix) {
            try FileManager.default.copyItem(atPath: store.path + suffix, toPath: folder + "/agent.sqlite" + suffix)
        }
        return folder + "/agent.sqlite"
    }

    static func stored(_ id: String, at path: String) throws -> TaskRun? {
        try SQLiteRunStore.readRun(id: id, reader: AgentStore.readOnlyQueue(path: path))
    }

    static func mark(at path: String) throws -> UInt64 {
        try AgentStore.readOnlyQueue(path: path).read { try RunJournal.mark(in: $0) }
    }

    static func waitWritten(_ store: AgentStore) {
        let done = DispatchSemaphore(value: 0)
        store.whenWritten(within: 120) { done.signal() }
        #expect(done.wait(timeout: .now() + 120) == .success)
    }

    @Test func aJournaledRunTheStoreHadNotWrittenIsQueuedAgainAtTheNextOpenAndTheJournalEmptiesOnceItIsWritten() throws {
        let folder = TestPaths.temporaryDirectory("run-journal")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let store = try Self.store(folder + "/live")
        defer { store.close() }
        let runs = try SQLiteRunStore(store: store)
        let run = TaskRun(id: "r-1", task: "t", input: ["n": 1], requestedBy: .cli)
        #expect(runs.journalNew(run))
        let journal = store.runJournal
        #expect(journal.size > 0)
        #expect(try Self.stored("r-1", at: store.path) == nil, "the run waits for its group commit")

        // A crash now: `agent-control task show` beside the stopped agent finds the run in
        // the journal, and the next open writes it from there, as it was.
        let copy = try Self.crashCopy(of: store, into: folder + "/crashed")
        let offline = try StoreReader(path: copy)
        #expect(try offline.run(id: "r-1")?.input == ["n": 1])
        #expect(try offline.runs(RunFilter(task: "t")).map(\.run.id) == ["r-1"])
        #expect(try offline.runs(RunFilter(task: "other")).isEmpty)
        let reopened = try AgentStore(path: copy, settings: StoreSettings(), logger: Logger(label: "test"))
        let recovered = try SQLiteRunStore(store: reopened)
        let unfinished = try StoreWait.result(timeout: 60) { try await recovered.loadUnfinished() }
        #expect(unfinished.map(\.id) == ["r-1"])
        #expect(unfinished.first?.input == ["n": 1])
        #expect(unfinished.first?.status == .queued)
        #expect(reopened.runJournal.size == 0)
        #expect(try String(contentsOfFile: RunJournal.path(for: copy), encoding: .utf8).isEmpty)
        #expect(try Self.mark(at: copy) == 1)
        reopened.close()

        // No crash: the run's commit writes the mark with it and empties the journal.
        Self.waitWritten(store)
        #expect(try Self.stored("r-1", at: store.path)?.status == .queued)
        #expect(try Self.mark(at: store.path) == 1)
        #expect(journal.size == 0)
        #expect(try String(contentsOfFile: RunJournal.path(for: store.path), encoding: .utf8).isEmpty)
    }

    /// A change of a run kept in the journal (its end on a full disk) is written at the next
    /// open over an older state of the run, never over a newer one: a line an open could not
    /// write, left in the file while the run went on, must not undo what it did since.
    @Test func aChangeInTheJournalIsWrittenOverAnOlderStateOfItsRunOnly() throws {
        let folder = TestPaths.temporaryDirectory("run-journal-changes")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/agent.sqlite"
        func run(_ id: String, _ status: TaskRun.Status, attempt: Int) -> TaskRun {
            var run = TaskRun(id: id, task: "t", requestedBy: .cli)
            run.status = status
            run.attempt = attempt
            return run
        }
        do {
            let store = try Self.store(folder)
            let runs = try SQLiteRunStore(store: store)
            for stored in [run("behind", .running, attempt: 1), run("ahead", .succeeded, attempt: 2), run("retried", .running, attempt: 2)] {
                #expect(runs.journalNew(TaskRun(id: stored.id, task: "t", requestedBy: .cli)))
                runs.record(stored)
            }
            Self.waitWritten(store)
            store.close()
        }
        let mark = try Self.mark(at: path)
        func change(_ seq: UInt64, _ run: TaskRun) -> String {
            #"{"seq":\#(mark + seq),"change":true,"run":"# + run.storedJSON.serialized() + "}\n"
        }
        // "behind" ended in the journal; "ahead" and "retried" moved on past their lines.
        // "begun": a run the store lacks, begun while the disk was full (a workflow step's), is
        // made by its changes, the latest last.
        let text = change(1, run("behind", .succeeded, attempt: 1)) + change(2, run("ahead", .running, attempt: 2))
            + change(3, run("retried", .retrying, attempt: 1)) + change(4, run("begun", .running, attempt: 1))
            + change(5, run("begun", .succeeded, attempt: 1))
        #expect(FileManager.default.createFile(atPath: RunJournal.path(for: path), contents: Data(text.utf8)))
        let reader = try AgentStore.readOnlyQueue(path: path)
        // Beside the stopped agent, as the next open writes them.
        let unwritten = try RunJournal.unwritten(path: RunJournal.path(for: path), reader: reader)
        #expect(unwritten.map { "\($0.id) \($0.status.rawValue)" } == ["behind succeeded", "begun succeeded"])
        #expect(try StoreReader(path: path).run(id: "begun")?.status == .succeeded)
        let store = try Self.store(folder)
        defer { store.close() }
        #expect(try Self.stored("behind", at: path)?.status == .succeeded)
        #expect(try Self.stored("ahead", at: path)?.status == .succeeded, "a finished run was changed")
        let retried = try Self.stored("retried", at: path)
        #expect(retried?.status == .running && retried?.attempt == 2, "a later attempt was undone: \(String(describing: retried))")
        let begun = try Self.stored("begun", at: path)
        #expect(begun?.status == .succeeded && begun?.attempt == 1, "a run begun on a full disk was not made: \(String(describing: begun))")
    }

    /// Once the store gave up changes as invalid (the journal pinned), lines past the mark may
    /// name runs written since: a run pruned then would be made again from its line at the
    /// next open (and run again). Runs are not pruned until then.
    @Test func runsAreNotPrunedWhileTheJournalIsPinned() async throws {
        let folder = TestPaths.temporaryDirectory("run-journal-pinned")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        // Retention keeps one finished run: the other two would go at its pass.
        var settings = StoreSettings()
        settings.commitInterval = 600
        settings.maximumRuns = 1
        let store = try AgentStore(path: folder + "/agent.sqlite", settings: settings, logger: Logger(label: "test"))
        defer { store.close() }
        let runs = try SQLiteRunStore(store: store)
        store.runJournal.pin()
        for id in ["ended-1", "ended-2", "ended-3"] {
            var ended = TaskRun(id: id, task: "t", requestedBy: .cli)
            ended.status = .succeeded
            ended.endedAt = Date().timeIntervalSince1970 - 100
            runs.record(ended)
        }
        Self.waitWritten(store)
        // The retention's pass (run here rather than waited for) and `task prune`.
        var warned = false
        #expect(store.enforceRetention(sizeWarned: &warned))
        #expect(try await runs.prune(endedBefore: Date().timeIntervalSince1970, keeping: nil) == 0)
        #expect(try await runs.list(RunFilter()).runs.count == 3, "pruned while the journal was pinned")
    }

    @Test func anOpenWritesOnlyLinesPastTheMarkOfRunsTheStoreLacksAndSkipsALineCutShort() throws {
        let folder = TestPaths.temporaryDirectory("run-journal-replay")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/agent.sqlite"
        do {
            let store = try Self.store(folder)
            let runs = try SQLiteRunStore(store: store)
            // Two runs through the journal, the first then finished: the mark is 2.
            var first = TaskRun(id: "done", task: "t", requestedBy: .cli)
            #expect(runs.journalNew(first))
            #expect(runs.journalNew(TaskRun(id: "pruned", task: "t", requestedBy: .cli)))
            first.status = .succeeded
            first.endedAt = Date().timeIntervalSince1970
            runs.record(first)
            Self.waitWritten(store)
            store.close()
        }
        // The second is pruned since; the journal holds both again (as a crash between the
        // commit and the file's emptying would leave it), a third past the mark, and a line
        // cut short.
        #expect(try Self.mark(at: path) == 2)
        // It waits its turn if the closed store's connection still holds the file a moment.
        var configuration = Configuration()
        configuration.busyMode = .timeout(60)
        let writer = try DatabaseQueue(path: path, configuration: configuration)
        try writer.write { try $0.execute(sql: "DELETE FROM task_runs WHERE id = 'pruned'") }
        try writer.close()
        func line(_ seq: Int, _ id: String) -> String {
            #"{"seq":\#(seq),"run":"# + TaskRun(id: id, task: "t", requestedBy: .cli).storedJSON.serialized() + "}\n"
        }
        // A line no agent wrote (a sequence number beyond any count) is skipped too.
        // So is a line of 3 MiB of zeros (read past, not held).
        let text = line(1, "done") + line(2, "pruned") + line(Int.max, "huge") + "garbage\n" + String(repeating: "\0", count: 3 << 20) + "\n"
            + line(3, "new") + String(line(4, "torn").dropLast(20))
        #expect(FileManager.default.createFile(atPath: RunJournal.path(for: path), contents: Data(text.utf8)))
        let reader = try AgentStore.readOnlyQueue(path: path)
        let descriptor = open(RunJournal.path(for: path), O_RDONLY)
        defer { close(descriptor) }
        var read: [String] = []
        #expect(try RunJournal.readLines(descriptor) { _, line in if case .run(let run, _) = line { read.append(run.id) } } == 3)
        #expect(read == ["done", "pruned", "new"])
        #expect(try RunJournal.unwritten(path: RunJournal.path(for: path), reader: reader).map(\.id) == ["new"])

        let store = try Self.store(folder)
        defer { store.close() }
        #expect(try Self.stored("done", at: path)?.status == .succeeded, "a run the store has was replaced")
        #expect(try Self.stored("pruned", at: path) == nil, "a run at or below the mark was made again")
        #expect(try Self.stored("new", at: path)?.status == .queued)
        #expect(try Self.stored("torn", at: path) == nil)
        #expect(try Self.stored("huge", at: path) == nil)
        #expect(try Self.mark(at: path) == 3)
        // The next line continues after the mark.
        #expect(try SQLiteRunStore(store: store).journalNew(TaskRun(id: "next", task: "t", requestedBy: .cli)))
        let written = try String(contentsOfFile: RunJournal.path(for: path), encoding: .utf8)
        #expect(written.hasPrefix(#"{"seq":4,"#), "\(written)")
    }

    @Test func withSynchronousFullThereIsNoJournalAndANewRunWaitsForTheStore() throws {
        let folder = TestPaths.temporaryDirectory("run-journal-full")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let store = try Self.store(folder, synchronous: "full")
        defer { store.close() }
        #expect(!store.runJournal.isEnabled)
        #expect(!(try SQLiteRunStore(store: store)).journalNew(TaskRun(id: "r", task: "t", requestedBy: .cli)))
        #expect(try String(contentsOfFile: RunJournal.path(for: store.path), encoding: .utf8).isEmpty)
    }

    @Test func aSecondAgentOnTheSameStoreIsRefusedUntilTheFirstHasClosedIt() throws {
        let folder = TestPaths.temporaryDirectory("run-journal-lock")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let first = try Self.store(folder)
        #expect {
            try Self.store(folder).close()
        } throws: { error in
            "\(error)".contains("another agent uses this store (it holds \(folder)/agent.sqlite-newruns)")
        }
        first.close()
        try Self.store(folder).close()
    }

    /// A child forked by any thread holds a copy of the journal's descriptor, and its lock,
    /// until it execs: a store closed and opened again in one process waited for that child
    /// instead of calling itself another agent (a flake under load). Here the child keeps the
    /// copy for a moment on purpose.
    @Test func aStoreOpenedAgainWaitsForItsOwnLockLeftInAChild() throws {
        let folder = TestPaths.temporaryDirectory("run-journal-child-copy")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try Self.store(folder).close()
        let descriptor = try RunJournal.lock(for: folder + "/agent.sqlite")
        let child = try Self.spawnHolding(descriptor, for: 0.5)
        #expect(RunJournal.takers(of: RunJournal.FileID(descriptor)) == [getpid()], "the lock is this process's")
        RunJournal.unlock(descriptor)
        // The child still holds the lock: the open waits for its end rather than refuse.
        let store = try Self.store(folder)
        var status: Int32 = 0
        #expect(waitpid(child, &status, WNOHANG) == child, "the open returned only once the child had ended")
        store.close()
    }

    /// Another process's lock is refused at once, whoever else holds it.
    @Test func aLockAnotherProcessTookIsNotWaitedFor() throws {
        let folder = TestPaths.temporaryDirectory("run-journal-other-process")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try Self.store(folder).close()
        let holder = Process()
        holder.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        holder.arguments = ["-c", "import fcntl,sys; f=open(sys.argv[1],'a'); fcntl.flock(f,fcntl.LOCK_EX); print('locked',flush=True); sys.stdin.read()",
                            RunJournal.path(for: folder + "/agent.sqlite")]
        let output = Pipe(), input = Pipe()
        holder.standardOutput = output
        holder.standardInput = input
        try holder.run()
        defer { try? input.fileHandleForWriting.close(); holder.waitUntilExit() }
        var said: [UInt8] = []
        while !said.contains(UInt8(ascii: "\n")) {
            let more = output.fileHandleForReading.availableData
            try #require(!more.isEmpty, "the holder ended: \(String(decoding: said, as: UTF8.self))")
            said += more
        }
        #expect(String(decoding: said, as: UTF8.self) == "locked\n")
        let started = Date()
        #expect {
            try Self.store(folder).close()
        } throws: { error in
            "\(error)".contains("another agent uses this store")
        }
        #expect(Date().timeIntervalSince(started) < RunJournal.longestWaitForOwnLock, "not waited for as if it were this process's")
    }

    /// `/bin/sh` sleeping `seconds` with a copy of `descriptor` as its fd 3.
    static func spawnHolding(_ descriptor: Int32, for seconds: Double) throws -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, descriptor, 3)
        var pid: pid_t = 0
        let arguments = ["/bin/sh", "-c", "exec sleep \(seconds)"]
        var argv = arguments.map { strdup($0) } + [nil]
        defer { for argument in argv { free(argument) } }
        let code = posix_spawn(&pid, "/bin/sh", &actions, nil, &argv, environ)
        try #require(code == 0, "posix_spawn: \(code)")
        return pid
    }

    /// SQLite keeps the WAL beside a symbolic link's target: the journal, and its lock, are
    /// there too, so a second agent that names the database through a link is refused.
    @Test func aSecondAgentNamingTheDatabaseThroughASymbolicLinkIsRefused() throws {
        let folder = TestPaths.temporaryDirectory("run-journal-symlinked")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let first = try Self.store(folder + "/real")
        try FileManager.default.createSymbolicLink(atPath: folder + "/folder-link", withDestinationPath: folder + "/real")
        try FileManager.default.createSymbolicLink(atPath: folder + "/file-link.sqlite", withDestinationPath: folder + "/real/agent.sqlite")
        for name in [folder + "/folder-link", folder + "/file-link.sqlite"] {
            var settings = StoreSettings()
            settings.commitInterval = 600
            #expect {
                try AgentStore(path: name.hasSuffix(".sqlite") ? name : name + "/agent.sqlite", settings: settings, logger: Logger(label: "test")).close()
            } throws: { error in
                "\(error)".contains("another agent uses this store (it holds \(RunJournal.path(for: first.path)))")
            }
        }
        #expect(RunJournal.path(for: folder + "/file-link.sqlite") == RunJournal.path(for: first.path))
        first.close()
        #expect(!FileManager.default.fileExists(atPath: folder + "/file-link.sqlite-newruns"))
    }

    @Test func aDatabaseWithASecondNameIsRefusedByEitherName() throws {
        let folder = TestPaths.temporaryDirectory("run-journal-hard-link")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try Self.store(folder).close()
        #expect(link(folder + "/agent.sqlite", folder + "/other.sqlite") == 0)
        for name in [folder + "/agent.sqlite", folder + "/other.sqlite"] {
            #expect {
                try AgentStore(path: name, settings: StoreSettings(), logger: Logger(label: "test")).close()
            } throws: { error in
                "\(error)".contains("its database \(name) has 2 names (hard links)")
            }
        }
        try FileManager.default.removeItem(atPath: folder + "/other.sqlite")
        try Self.store(folder).close()
    }

    @Test func aJournalRemovedWhileTheAgentRunsIsMadeAgainWithItsLinesAndStillLocksTheStore() throws {
        let folder = TestPaths.temporaryDirectory("run-journal-removed")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let store = try Self.store(folder + "/live")
        defer { store.close() }
        let runs = try SQLiteRunStore(store: store)
        #expect(runs.journalNew(TaskRun(id: "before", task: "t", requestedBy: .cli)))
        try FileManager.default.removeItem(atPath: RunJournal.path(for: store.path))
        #expect(runs.journalNew(TaskRun(id: "after", task: "t", requestedBy: .cli)))
        let text = try String(contentsOfFile: RunJournal.path(for: store.path), encoding: .utf8)
        #expect(text.split(separator: "\n").count == 2, "\(text)")
        #expect(throws: StoreOpenError.self) { try Self.store(folder + "/live").close() }
        let copy = try Self.crashCopy(of: store, into: folder + "/crashed")
        let reopened = try AgentStore(path: copy, settings: StoreSettings(), logger: Logger(label: "test"))
        defer { reopened.close() }
        #expect(try Self.stored("before", at: copy) != nil)
        #expect(try Self.stored("after", at: copy) != nil)
    }

    @Test func aSymbolicLinkAtTheJournalsPathIsRefusedAndItsTargetLeftAlone() throws {
        let folder = TestPaths.temporaryDirectory("run-journal-link")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let target = folder + "/elsewhere"
        #expect(FileManager.default.createFile(atPath: target, contents: Data("keep me\n".utf8)))
        try FileManager.default.createSymbolicLink(atPath: folder + "/agent.sqlite-newruns", withDestinationPath: target)
        #expect {
            try Self.store(folder).close()
        } throws: { error in
            "\(error)".contains("agent.sqlite-newruns is a symbolic link; it must be a regular file: remove the link")
        }
        #expect(try String(contentsOfFile: target, encoding: .utf8) == "keep me\n")
    }

    @Test func keptChangesOfJournaledRunsNeverGiveWay() {
        var kept = RetainedWrites(limit: 1)
        let runs = ["a", "b", "c"].map { TaskRun(id: $0, task: "t", requestedBy: .cli) }
        #expect(kept.keep(runs: runs, workflows: [], protecting: ["a", "c"]) == 1)
        #expect(kept.runs.map(\.id) == ["a", "c"])
        #expect(kept.lost == 1)
    }

    @Test func journaledRunsWaitingWhileTheStoreCannotWriteAreAllWrittenWhateverTheQueueLimit() throws {
        let folder = TestPaths.temporaryDirectory("run-journal-busy")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        var settings = StoreSettings()
        settings.queueLimit = 1
        settings.commitInterval = 0
        let store = try AgentStore(path: folder + "/agent.sqlite", settings: settings, logger: Logger(label: "test"))
        // Another connection holds the write lock past the store's busy timeout (5 s).
        // It waits its turn if the store's writer is busy at that moment.
        var configuration = Configuration()
        configuration.busyMode = .timeout(60)
        let blocker = try DatabaseQueue(path: store.path, configuration: configuration)
        let release = DispatchSemaphore(value: 0)
        let held = DispatchSemaphore(value: 0)
        let holder = Thread {
            do {
                try blocker.writeWithoutTransaction { db in
                    try db.execute(sql: "BEGIN IMMEDIATE")
                    held.signal()
                    release.wait()
                    try db.execute(sql: "COMMIT")
                }
            } catch {
                Issue.record("the blocker could not hold the write lock: \(error)")
                held.signal()
            }
        }
        holder.start()
        #expect(held.wait(timeout: .now() + 120) == .success)
        let runs = try SQLiteRunStore(store: store)
        let ids = (1...3).map { "r-\($0)" }
        for id in ids { #expect(runs.journalNew(TaskRun(id: id, task: "t", requestedBy: .cli))) }
        #expect(WorkflowAgent.wait(timeout: 60) { store.statistics.degraded != nil }, "\(store.statistics)")
        release.signal()
        #expect(WorkflowAgent.wait(timeout: 60) { store.statistics.degraded == nil && store.statistics.retained == 0 }, "\(store.statistics)")
        #expect(store.statistics.lostChanges == 0)
        #expect(store.runJournal.size == 0)
        store.close()
        for id in ids { #expect(try Self.stored(id, at: folder + "/agent.sqlite") != nil, "acknowledged run \(id) is gone") }
    }

    /// Holds every run it is given (these tests are about the coordinator, its caller).
    @LoopActor final class HoldingRunner: @LoopActor TaskRunner {
        var started: [String] = []
        private var reports: [String: (TaskRunReport) -> Void] = [:]

        nonisolated init() {}

        func start(_ run: TaskRunStart, report: @escaping (TaskRunReport) -> Void) {
            started.append(run.runID)
            reports[run.runID] = report
        }

        func cancel(runID: String, reason: TaskRunOutcome.Status) {
            reports.removeValue(forKey: runID)?(.finished(TaskRunOutcome(status: reason)))
        }

        func shutDown() {
            for report in reports.values { report(.finished(TaskRunOutcome(status: .interrupted))) }
            reports = [:]
        }
    }

    @Test func aRequestedRunIsAnsweredAndStartedBeforeTheStoresWriterHasItAndSurvivesACrash() throws {
        let folder = TestPaths.temporaryDirectory("run-journal-request")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let store = try Self.store(folder + "/live")
        defer { store.close() }
        let runs = try SQLiteRunStore(store: store)
        let loop = EventLoop()
        let runner = HoldingRunner()
        let id = try loop.isolated { () throws -> String in
            let tasks = TaskCoordinator(loop: loop, store: runs, logger: Logger(label: "test"))
            tasks.register(runner, for: "command")
            tasks.apply([TaskDefinition(name: "t", type: "command", command: .init(arguments: ["/bin/true"]))])
            var answer: Result<TaskRunAnswer, CommandError>?
            tasks.runTask(TaskRunCommand.Request(name: "t"), origin: .cli) { answer = $0 }
            // No loop turn has passed: nothing came back from the writer thread.
            let id = try #require(try answer?.get().run["id"]?.stringValue, "the request waited for the store")
            #expect(runner.started == [id])
            return id
        }
        #expect(try Self.stored(id, at: store.path) == nil)
        let copy = try Self.crashCopy(of: store, into: folder + "/crashed")
        let reopened = try AgentStore(path: copy, settings: StoreSettings(), logger: Logger(label: "test"))
        defer { reopened.close() }
        #expect(try Self.stored(id, at: copy)?.task == "t", "an answered run was lost in a crash")
    }
}

extension RunJournalTests {
    /// A run that carries its input as text (made off the loop, where it was asked for) is
    /// journaled with that text put in as it is: the line reads back as the run's record; a
    /// run whose input changed since carries no text, and its record has the new input.
    @Test func aRunsInputTextIsPutIntoItsJournalLineAsItIs() throws {
        let input: JSONValue = ["numbers": .array((0..<1000).map { .number(JSONNumber($0)) }), "text": "é \"q\" \u{1}"]
        var run = TaskRun(id: "r-1", task: "t", input: input, requestedBy: .http)
        run.inputText = InputText(input.serializedBytes())
        let record = try JSONValue.parse(RunJournal.record(of: run))
        #expect(record == run.storedJSON, "the same record, whichever way it was written")
        #expect(TaskRun(stored: record)?.input == input)

        run.input = ["other": 1]
        #expect(run.inputText.bytes == nil, "a changed input drops its text")
        #expect(try JSONValue.parse(RunJournal.record(of: run))["input"] == ["other": 1])
    }
}
