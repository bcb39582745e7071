import AgentWork
import Foundation
import GRDB
import JSONSchema
import Logging

/// The journal read back: at the open (what a crash left is written to the store) and beside
/// a stopped agent (``StoreReader``).
extension RunJournal {
    /// The store's mark: the highest sequence number of a journaled run it has written.
    package static func mark(in db: Database) throws -> UInt64 {
        UInt64(max(0, try Int64.fetchOne(db, sql: "SELECT seq FROM run_journal WHERE id = 1") ?? 0))
    }

    /// Writes the mark (in the transaction that writes the runs up to it).
    package static func setMark(_ seq: UInt64, in db: Database) throws {
        try db.execute(sql: "INSERT INTO run_journal (id, seq) VALUES (1, ?) ON CONFLICT(id) DO UPDATE SET seq = excluded.seq",
                       arguments: [Int64(clamping: seq)])
    }

    /// Writes the runs in the journal past the store's mark that the store does not have,
    /// moves the mark past them and empties the file. Returns the mark. A line cut short by a
    /// crash (its request was never answered) is skipped; a line that is not one of ours is
    /// skipped and counted in the log.
    static func replay(_ descriptor: Int32, path: String, into database: DatabaseQueue, logger: Logger) throws -> UInt64 {
        let (mark, skipped, written, changed) = try database.write { db -> (UInt64, Int, Int, Int) in
            var mark = try Self.mark(in: db)
            var written = 0, changed = 0
            var made: [String: WorkflowRun] = [:]
            func apply(_ seq: UInt64, _ line: Line) throws {
                guard seq > mark else { return }
                mark = seq
                let (run, change): (TaskRun, Bool)
                switch line {
                case .run(let lineRun, let lineChange): (run, change) = (lineRun, lineChange)
                case .workflow(let commit):
                    let newer = try Self.newer(commit, in: db, made: &made)
                    guard !newer.runs.isEmpty || !newer.steps.isEmpty else { return }
                    try SQLiteWorkflowStore.write([newer], in: db)
                    changed += 1
                    return
                }
                // A change is written only over an older state of the run: a line left by an
                // open that could not replay it must not undo what the run did since.
                if change {
                    guard try Self.isNewer(run, than: SQLiteRunStore.readRun(id: run.id, in: db)) else { return }
                    try SQLiteRunStore.write([run], in: db)
                    changed += 1
                    return
                }
                guard try !Self.stores(run, in: db) else { return }
                try SQLiteRunStore.write([run], in: db)
                written += 1
            }
            // The room's lines (a full disk's changes) are all later than the file's.
            let skipped = try Self.readLines(descriptor, apply) + Self.readRoom(of: path, apply)
            try Self.setMark(mark, in: db)
            return (mark, skipped, written, changed)
        }
        if written > 0 {
            logger.notice("store: \(written) acknowledged run(s) the agent had not written to its database when it stopped were found in \(path) and queued again")
        }
        if changed > 0 {
            logger.notice("store: \(changed) change(s) of runs (an end, a start, a workflow's step) that the database had no room for when the agent stopped were found in \(path) and written")
        }
        if skipped > 0 {
            logger.warning("store: \(skipped) line(s) of \(path) were not runs of this agent's and were skipped (the file is written by the agent alone)")
        }
        guard ftruncate(descriptor, 0) == 0 else {
            throw StoreOpenError("cannot empty its run journal \(path): \(String(cString: strerror(errno)))")
        }
        // Past the mark now: a room not cleared is read again and skipped.
        _ = DiskRoom.clearLines(at: roomPath(for: path))
        return mark
    }

    /// The runs in the journal at `path` past the store's mark that the store lacks, and the
    /// runs whose newer record it holds (their latest), in order: what a crash left for the
    /// next start to write (read beside a stopped agent; a running one writes them within its
    /// commit interval).
    package static func unwritten(path: String, reader: DatabaseQueue) throws -> [TaskRun] {
        var runs: [TaskRun] = []
        try readUnwritten(path: path, reader: reader) { run in
            // The latest record of each run, where its first was.
            if let index = runs.firstIndex(where: { $0.id == run.id }) { runs[index] = run } else { runs.append(run) }
        }
        return runs
    }

    /// The records of run `id`'s attempts that the journal holds past the store's mark (the
    /// latest of each), as ``unwritten(path:reader:)`` reads them.
    package static func unwrittenAttempts(of id: String, path: String, reader: DatabaseQueue) throws -> [TaskAttempt] {
        var attempts: [Int: TaskAttempt] = [:]
        try readUnwritten(path: path, reader: reader) { run in
            if run.id == id, let attempt = run.attemptRecord { attempts[attempt.number] = attempt }
        }
        return attempts.values.sorted { $0.number < $1.number }
    }

    /// Calls `body` with each record past the store's mark that is newer than the store's.
    private static func readUnwritten(path: String, reader: DatabaseQueue, _ body: (TaskRun) -> Void) throws {
        try readPastMark(path: path, reader: reader) { db, line in
            guard case .run(let run, let change) = line else { return }
            if change {
                guard try Self.isNewer(run, than: SQLiteRunStore.readRun(id: run.id, in: db)) else { return }
            } else {
                guard try !Self.stores(run, in: db) else { return }
            }
            body(run)
        }
    }

    /// What the journal at `path` holds of workflow runs past the store's mark that is newer
    /// than the store's, folded (the latest record of each run and of each step): what the next
    /// start writes, shown beside a stopped agent.
    package static func unwrittenWorkflows(path: String, reader: DatabaseQueue) throws -> UnwrittenWorkflows {
        var runs: [String: WorkflowRun] = [:]
        var steps: [String: [WorkflowStepRecord]] = [:]
        var made: [String: WorkflowRun] = [:]
        var new: [String] = []
        try readPastMark(path: path, reader: reader) { db, line in
            guard case .workflow(let commit) = line else { return }
            let newer = try Self.newer(commit, in: db, made: &made)
            for run in newer.runs where runs[run.id] == nil {
                if try Int.fetchOne(db, sql: "SELECT 1 FROM workflow_runs WHERE id = ?", arguments: [run.id]) == nil { new.append(run.id) }
            }
            for run in newer.runs where run.revision > runs[run.id]?.revision ?? 0 { runs[run.id] = run }
            for step in newer.steps {
                var known = steps[step.runID] ?? []
                if let index = known.firstIndex(where: { $0.stepID == step.stepID && $0.generation == step.generation }) { known[index] = step } else { known.append(step) }
                steps[step.runID] = known
            }
        }
        return UnwrittenWorkflows(runs: runs, steps: steps, new: new)
    }

    /// What ``unwrittenWorkflows(path:reader:)`` finds.
    package struct UnwrittenWorkflows {
        /// The latest record of each run.
        package var runs: [String: WorkflowRun]
        /// The latest record of each step, by run.
        package var steps: [String: [WorkflowStepRecord]]
        /// The runs among `runs` the store lacks (begun while the disk was full), in the order they began.
        package var new: [String]
    }

    /// Calls `body` with each line of the journal at `path` and of its room past the store's
    /// mark, in a read of `reader`.
    private static func readPastMark(path: String, reader: DatabaseQueue, _ body: (Database, Line) throws -> Void) throws {
        let descriptor = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        guard descriptor >= 0 else { return }
        defer { Glibc.close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0, status.st_mode & S_IFMT == S_IFREG,
              status.st_size > 0 || DiskRoom.holdsLines(at: roomPath(for: path)) else { return }
        try reader.read { db in
            // A store from before the journal has no mark, and no journal either.
            guard try db.tableExists("run_journal") else { return }
            let mark = try Self.mark(in: db)
            func read(_ seq: UInt64, _ line: Line) throws {
                guard seq > mark else { return }
                try body(db, line)
            }
            try Self.readLines(descriptor, read)
            try Self.readRoom(of: path, read)
        }
    }

    /// Whether `run` is further along than `stored`: a later attempt, or the same one further
    /// on (queued, running, waiting to retry, ended). A run that ended is never changed again (a
    /// rerun is a new run). One the store lacks was begun while the disk was full (a workflow
    /// step's run, an event's): its first record was a change too, and makes it. (A line past
    /// the mark was never written, so its run was never pruned; where lines past the mark may
    /// have been written, runs are not pruned: ``keepsRunsFromPruning``.)
    static func isNewer(_ run: TaskRun, than stored: TaskRun?) -> Bool {
        guard let stored else { return true }
        func rank(_ run: TaskRun) -> (Int, Int) {
            let phase = run.status.isFinished ? 3 : run.status == .retrying ? 2 : run.status == .running ? 1 : 0
            return (run.attempt, phase)
        }
        return !stored.status.isFinished && rank(run) > rank(stored)
    }

    /// What of a journaled workflow change is newer than the store's: the run's record over an
    /// earlier revision of a run the store has and that has not finished (its definition and
    /// input the store's: the line leaves them out), and the step records of such runs that
    /// the store lacks or holds at an earlier attempt, or not ended at the same one. A run the
    /// store lacks is made from a line that carries its definition (begun while the disk was
    /// full: ``WorkflowCommit/unstored``). Lines past the mark were never written, so this
    /// holds against a line left while the run went on: one the store gave up as invalid
    /// (``pin()``), or one an open could not write.
    /// `made`: the runs earlier lines made or changed, newest record of each (a reader beside a
    /// stopped agent writes none of them to `db`).
    static func newer(_ commit: WorkflowCommit, in db: Database, made: inout [String: WorkflowRun]) throws -> WorkflowCommit {
        var stored: [String: (run: WorkflowRun?, known: Bool)] = [:]
        // Before this line: a line's steps are judged against its run as it was, not as the line leaves it.
        func current(_ id: String) throws -> (run: WorkflowRun?, known: Bool) {
            if let run = made[id] { return (run.status.isFinished ? nil : run, true) }
            if let known = stored[id] { return known }
            let found = try Self.stored(id, in: db)
            stored[id] = found
            return found
        }
        var newer = WorkflowCommit()
        var live = Set<String>()
        for var run in commit.runs {
            let (current, known) = try current(run.id)
            if let current {
                live.insert(run.id)
                guard run.revision > current.revision else { continue }
                run.definition = current.definition
                run.input = current.input
            } else if known || run.definition == .null {
                continue
            }
            live.insert(run.id)
            newer.runs.append(run)
        }
        for step in commit.steps where try live.contains(step.runID) || current(step.runID).run != nil {
            let current = try String.fetchOne(db, sql: "SELECT data FROM workflow_steps WHERE run_id = ? AND step = ? AND generation = ?",
                                              arguments: [step.runID, step.stepID, step.generation])
                .flatMap { try? JSONValue.parse(Data($0.utf8)) }.flatMap(WorkflowStepRecord.init(stored:))
            if let current, (current.attempt, current.status.isFinished ? 1 : 0) >= (step.attempt, step.status.isFinished ? 1 : 0) { continue }
            newer.steps.append(step)
        }
        for run in newer.runs { made[run.id] = run }
        return newer
    }

    /// Workflow run `id` as the store has it: its record, nil when it has finished or cannot be
    /// read (neither is changed, nor made again); `known`: whether the store has it at all.
    private static func stored(_ id: String, in db: Database) throws -> (run: WorkflowRun?, known: Bool) {
        guard let data = try String.fetchOne(db, sql: "SELECT data FROM workflow_runs WHERE id = ?", arguments: [id]) else { return (nil, false) }
        return (SQLiteWorkflowStore.decodeRun(data).flatMap { $0.status.isFinished ? nil : $0 }, true)
    }

    /// Whether the store has `run` (in any state).
    private static func stores(_ run: TaskRun, in db: Database) throws -> Bool {
        try Int.fetchOne(db, sql: "SELECT 1 FROM task_runs WHERE id = ?", arguments: [run.id]) != nil
    }

    /// How a line of ours begins.
    private static let linePrefix = Array(#"{"seq":"#.utf8)
    /// The longest line read: a run whose input is HTTP's largest body (64 MiB), each byte
    /// escaped at worst as `\u00XX`, and its record.
    static let lineLimit = 512 << 20

    /// Reads the file from its start in chunks (a line at a time in memory), calling `body`
    /// with each whole line's run in order. Returns how many lines were not runs. A line that
    /// does not begin as ours, or is longer than ``lineLimit``, is skipped without being held
    /// (a tail of zeros); a last line of ours without its newline was cut short by a crash
    /// (its request was never answered) and is not counted.
    /// ``readLines(_:untilZero:_:)`` of the room kept beside the journal at `path` (none: 0).
    @discardableResult
    static func readRoom(of path: String, _ body: (UInt64, Line) throws -> Void) throws -> Int {
        let descriptor = open(roomPath(for: path), O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        guard descriptor >= 0 else { return 0 }
        defer { Glibc.close(descriptor) }
        return try readLines(descriptor, untilZero: true, body)
    }

    /// With `untilZero`, the file ends at its first zero byte (the room's allocated rest).
    @discardableResult
    static func readLines(_ descriptor: Int32, untilZero: Bool = false, _ body: (UInt64, Line) throws -> Void) throws -> Int {
        var skipped = 0
        var pending: [UInt8] = []
        var discarding = false
        var chunk = [UInt8](repeating: 0, count: 1 << 20)
        var offset: off_t = 0
        while true {
            let count = chunk.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, $0.count, offset) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { break }
            offset += off_t(count)
            let end = untilZero ? chunk[0..<count].firstIndex(of: 0) : nil
            let used = end ?? count
            var start = 0
            for index in 0..<used where chunk[index] == UInt8(ascii: "\n") {
                if discarding {
                    discarding = false
                    skipped += 1
                } else {
                    pending += chunk[start..<index]
                    if let (seq, line) = Self.entry(pending) { try body(seq, line) } else { skipped += 1 }
                }
                pending.removeAll(keepingCapacity: pending.count < 1 << 20)
                start = index + 1
            }
            if !discarding {
                pending += chunk[start..<used]
                if pending.count > lineLimit || !zip(pending, linePrefix).allSatisfy(==) {
                    discarding = true
                    pending = []
                }
            }
            if end != nil { break }
        }
        return skipped + (discarding ? 1 : 0)
    }

    /// What a line holds.
    enum Line {
        /// A task run: new (acknowledged before the store wrote it), or a change of one (with
        /// its attempt's record).
        case run(TaskRun, change: Bool)
        /// A workflow change the store could not write.
        case workflow(WorkflowCommit)
    }

    /// A line's sequence number and what it holds; nil when it is not one of ours.
    static func entry(_ line: [UInt8]) -> (UInt64, Line)? {
        guard let object = (try? JSONValue.parse(Data(line)))?.objectValue,
              let number = object["seq"]?.numberValue?.intValue, number >= 1, UInt64(number) <= largestSequence else { return nil }
        let change = object["change"] == true
        if change, let workflow = object["workflow"] {
            guard let runs = workflow["runs"]?.arrayValue, let steps = workflow["steps"]?.arrayValue else { return nil }
            let commit = WorkflowCommit(runs: runs.compactMap(WorkflowRun.init(stored:)), steps: steps.compactMap(WorkflowStepRecord.init(stored:)))
            guard commit.runs.count == runs.count, commit.steps.count == steps.count else { return nil }
            return (UInt64(number), .workflow(commit))
        }
        guard var run = object["run"].flatMap(TaskRun.init(stored:)) else { return nil }
        if change, let attempt = object["attempt"], let data = attempt["data"] {
            run.attemptRecord = TaskAttempt(stored: data, stderrTail: attempt["stderr_tail"]?.stringValue, stdoutTail: attempt["stdout_tail"]?.stringValue)
        }
        return (UInt64(number), .run(run, change: change))
    }
}
