import AgentWork
import Foundation
import GRDB
import JSONSchema
import Logging
import Synchronization

/// New task runs that a request waits for, made durable by one `write(2)` on the caller's
/// thread instead of a transaction of the store's writer: the file `agent.sqlite-newruns`
/// beside the database, one line per run (`{"seq":N,"run":{…}}`).
///
/// Why: since acknowledged runs are durable, a request waited for its run's own transaction
/// (a hand-off to the writer thread and back, and five or six whole pages) before the run
/// was queued: ~0.2 ms of a module task's start. A line appended here survives what a commit
/// in the store survives with `synchronous: normal` (a crash of the agent, SIGKILL included:
/// both are in the kernel's page cache once the call returns), and the run's record then
/// group-commits with its next changes.
///
/// The store's transaction that writes a journaled run also writes the journal's mark (table
/// `run_journal`, the highest sequence number written), and once it has committed the file is
/// emptied, when nothing newer waits in it. At the next open, runs past the mark that the
/// store does not have are written first (``recovered(descriptor:databasePath:database:synchronous:logger:)``):
/// what a crash left in the file is queued again, and a run already written (perhaps finished
/// and pruned since) is never made again.
///
/// The file is also the store's lock: an agent holds it (`flock`) from the open to its
/// writer's end, so a second agent given the same store is refused it rather than running the
/// first one's runs.
///
/// Appends are refused (the caller then waits for the store's own transaction, as before)
/// with `synchronous: full` (a line would need a sync of its own), when the journal could not
/// be replayed at the open, once the file holds ``sizeLimit`` bytes the store has not caught
/// up with, while the store cannot write (``hold(_:)``: such requests are refused), and after
/// the store gave up changes as invalid (``pin()``).
///
/// The journal also keeps what the store could not write of runs already answered — a run's
/// end on a full disk (``appendChange(_:)``, lines `{"seq":N,"change":true,"run":{…},"attempt":{…}}`):
/// when the file cannot take them (the disk is full) they go into the blocks a ``DiskRoom``
/// keeps allocated, so that such a line is written when the database cannot be, and an agent
/// killed before the disk has room again does not run the run again at its next start. Workflow changes go
/// there too (``appendChange(_:)-(WorkflowCommit)``): a step whose end was kept so is not run
/// again. The next open writes them over what the store has.
package final class RunJournal: Sendable {
    /// The file's path: the database's, with `-newruns`.
    package let path: String
    /// The store's mark at the open: lines continue after it.
    package let mark: UInt64
    /// Whether lines are appended at all (see the type's notes).
    package let isEnabled: Bool
    private let state: Mutex<State>

    private struct State {
        var descriptor: Int32
        /// The sequence number of the last line appended (and of the mark at the open).
        var appended: UInt64
        /// The highest sequence number the store has committed.
        var committed: UInt64
        /// Bytes in the file.
        var size = 0
        /// No mark is written and nothing appended until the next open (see ``pin()``).
        var pinned = false
        /// The file was removed or replaced and could not be made again: nothing appended.
        var detached = false
        /// The store cannot write: new runs are not appended (their requests are refused).
        var holding = false
        /// The disk's bytes kept for the changes (nil when nothing is appended).
        var room: DiskRoom?
        /// Changes go into the room (the disk was full), until the store has written them all:
        /// so that every line there is later than every line of the file.
        var inRoom = false
    }

    /// Bytes the file may hold before appends wait for the store to catch up.
    package static let sizeLimit = 1 << 20

    /// The path of the room kept for the journal at `path` (`agent.sqlite-room`).
    package static func roomPath(for path: String) -> String {
        (path.hasSuffix("-newruns") ? String(path.dropLast("-newruns".count)) : path) + "-room"
    }
    /// A sequence number beyond this is not one of ours (lines count from 1; this is far from
    /// any count and from the integers JSON and SQLite hold).
    static let largestSequence: UInt64 = 1 << 52

    /// The journal's path for the database at `databasePath`: beside the file its name leads
    /// to, as SQLite keeps a database's WAL beside the target of a symbolic link, so that every
    /// name of one database has one journal, and one lock.
    package static func path(for databasePath: String) -> String { resolved(databasePath) + "-newruns" }

    /// `path` with its symbolic links followed; for a file not made yet, its folder's.
    static func resolved(_ path: String) -> String {
        func real(_ path: String) -> String? {
            guard let resolved = realpath(path, nil) else { return nil }
            defer { free(resolved) }
            return String(cString: resolved)
        }
        if let whole = real(path) { return whole }
        let slash = path.lastIndex(of: "/")
        let folder = slash.map { path[..<$0].isEmpty ? "/" : String(path[..<$0]) } ?? "."
        let name = slash.map { String(path[path.index(after: $0)...]) } ?? path
        guard let resolvedFolder = real(folder) else { return path }
        return (resolvedFolder == "/" ? "" : resolvedFolder) + "/" + name
    }

    private let logger: Logger

    private init(path: String, descriptor: Int32, mark: UInt64, enabled: Bool, logger: Logger) {
        self.path = path
        self.mark = mark
        self.logger = logger
        isEnabled = enabled
        var state = State(descriptor: descriptor, appended: mark, committed: mark)
        if enabled { state.room = DiskRoom(path: Self.roomPath(for: path)) }
        self.state = Mutex(state)
    }

    deinit {
        state.withLock { if $0.descriptor >= 0 { Self.unlock($0.descriptor) } }
    }

    /// The journal, once the runs a crash left in it are written to `database`. When that
    /// write fails the file is left for the next open, and appends are refused until then;
    /// when it fails for want of room (a full disk), the open fails, saying so: the runs would
    /// otherwise resume from what the database has, older than what the file holds (a run
    /// that ended would run again).
    package static func recovered(descriptor: Int32, databasePath: String, database: DatabaseQueue, synchronous full: Bool,
                                  logger: Logger) throws -> RunJournal {
        let path = path(for: databasePath)
        do {
            let mark: UInt64
            do {
                mark = try replay(descriptor, path: path, into: database, logger: logger)
            } catch let error as DatabaseError where error.resultCode == .SQLITE_FULL {
                // The room kept aside is for this too: what it holds past its lines given back,
                // the replay is tried once more.
                DiskRoom.shrinkToLines(at: roomPath(for: path))
                mark = try replay(descriptor, path: path, into: database, logger: logger)
            }
            return RunJournal(path: path, descriptor: descriptor, mark: mark, enabled: !full, logger: logger)
        } catch let error as DatabaseError where error.resultCode == .SQLITE_FULL {
            throw StoreOpenError("cannot write the runs its run journal \(path) holds to the database (\(error)), though the 2 MiB kept aside in \(roomPath(for: path)) were given back (but for the changes they hold, which are not written yet): free some space on its disk, then start again")
        } catch {
            logger.error("store: the new runs in \(path) could not be written to the database (\(error)); they are tried again at the next start, and until then requests wait for the store")
            return RunJournal(path: path, descriptor: descriptor, mark: .max, enabled: false, logger: logger)
        }
    }

    /// Appends `run`; its sequence number once the line is in the file, nil when it is not
    /// (the file cannot be written, or is full): the caller then waits for the store.
    package func append(_ run: TaskRun) -> UInt64? {
        appendLine(change: false) { seq in
            Array("{\"seq\":\(seq),\"run\":".utf8) + Self.record(of: run) + Array("}\n".utf8)
        }
    }

    /// Appends a change of a run that the store could not write (its end, on a full disk),
    /// with its attempt's record, within the room the file keeps: the sequence number, nil
    /// when it does not fit or cannot be written (the change then waits in memory alone).
    package func appendChange(_ run: TaskRun) -> UInt64? {
        appendLine(change: true) { seq in
            var line = Array("{\"seq\":\(seq),\"change\":true,\"run\":".utf8) + Self.record(of: run)
            if let attempt = run.attemptRecord {
                var object: JSONObject = ["data": attempt.storedJSON]
                if let tail = attempt.stderrTail { object["stderr_tail"] = .string(tail) }
                if let tail = attempt.stdoutTail { object["stdout_tail"] = .string(tail) }
                line += Array(",\"attempt\":".utf8) + Array(JSONValue.object(object).serialized().utf8)
            }
            return line + Array("}\n".utf8)
        }
    }

    /// Appends a workflow change the store could not write (a step's end, a run's new state,
    /// on a full disk), as ``appendChange(_:)-(TaskRun)`` does a task run's: lines
    /// `{"seq":N,"change":true,"workflow":{"runs":[…],"steps":[…]}}`.
    /// A run's definition and input, which never change, are left out (the replay takes the
    /// store's; the room is shared with task runs' ends), but for a run the store has not
    /// written yet (``WorkflowCommit/unstored``): the replay makes it from its line.
    package func appendChange(_ commit: WorkflowCommit) -> UInt64? {
        appendLine(change: true) { seq in Self.line(seq, commit) }
    }

    /// The journal's line of a workflow change.
    static func line(_ seq: UInt64, _ commit: WorkflowCommit) -> [UInt8] {
        let runs = commit.runs.map { run -> JSONValue in
            guard !commit.unstored.contains(run.id), var object = run.storedJSON.objectValue else { return run.storedJSON }
            object["definition"] = .null
            object["input"] = nil
            return .object(object)
        }
        let change: JSONValue = ["runs": .array(runs), "steps": .array(commit.steps.map(\.storedJSON))]
        return Array("{\"seq\":\(seq),\"change\":true,\"workflow\":".utf8) + Array(change.serialized().utf8) + Array("}\n".utf8)
    }

    /// Whether a change line of `bytes` would find room now, the disk being full: in the
    /// blocks the room keeps allocated.
    package func keeps(bytes: Int) -> Bool {
        guard isEnabled else { return false }
        return state.withLock { state in
            !state.pinned && !state.detached && state.descriptor >= 0 && state.room.map { $0.isKept && $0.used + bytes <= DiskRoom.bytes } == true
        }
    }

    /// New runs are held back while the store cannot write (their requests are refused, as
    /// the store refuses them): what room there is goes to changes. Once it writes, a room not
    /// kept yet is allocated (tried at most every 5 s, until the disk has it).
    package func hold(_ holding: Bool) {
        state.withLock { state in
            state.holding = holding
            if !holding, state.room?.isKept == false, let free = state.room?.take() {
                logger.warning("store: cannot keep \(DiskRoom.bytes >> 20) MiB aside in \(Self.roomPath(for: path)) for the run journal (\(free >> 10) KiB free on its disk, and it leaves a MiB more): until it can, changes of runs made while the disk is full are kept in memory only, and a kill loses them. Free some space")
            }
        }
    }

    private func appendLine(change: Bool, _ make: (UInt64) -> [UInt8]) -> UInt64? {
        guard isEnabled else { return nil }
        return state.withLock { state -> UInt64? in
            guard !state.pinned, state.descriptor >= 0, change || (state.size < Self.sizeLimit && !state.holding && !state.inRoom),
                  relinked(&state) else { return nil }
            let seq = state.appended + 1
            let line = make(seq)
            if !state.inRoom {
                if (!change || state.size + line.count <= Self.sizeLimit), Self.writeAll(state.descriptor, line) {
                    state.appended = seq
                    state.size += line.count
                    return seq
                }
                // A part written (a full disk) is cut off, so that the next line starts a line.
                _ = ftruncate(state.descriptor, off_t(state.size))
                guard change else { return nil }
            }
            // A change on a full disk: into the blocks the room keeps allocated.
            guard state.room?.write(line) == true else { return nil }
            state.inRoom = true
            state.appended = seq
            return seq
        }
    }

    /// The run's record as JSON text; its input, when the run carries it as text already
    /// (made off the loop), is put in as it is rather than written again.
    static func record(of run: TaskRun) -> [UInt8] { run.storedBytes }

    /// Whether the descriptor is still the file at ``path``. One removed while the agent runs
    /// (`rm agent.sqlite-*`) would take the lock and the lines not yet written with it: it is
    /// made again, locked, with what the old one holds. When it cannot be (another agent took
    /// the path meanwhile, or something else is there), nothing is appended until the next open.
    private func relinked(_ state: inout State) -> Bool {
        guard !state.detached else { return false }
        var onDisk = stat(), opened = stat()
        if lstat(path, &onDisk) == 0, fstat(state.descriptor, &opened) == 0, onDisk.st_dev == opened.st_dev, onDisk.st_ino == opened.st_ino {
            return true
        }
        let fresh = open(path, O_RDWR | O_APPEND | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        var lines = [UInt8](repeating: 0, count: state.size)
        guard fresh >= 0, flock(fresh, LOCK_EX | LOCK_NB) == 0,
              lines.withUnsafeMutableBytes({ pread(state.descriptor, $0.baseAddress, $0.count, 0) }) == state.size,
              Self.writeAll(fresh, lines) else {
            let code = errno
            if fresh >= 0 { Glibc.close(fresh) }
            state.detached = true
            logger.error("store: the run journal \(path) was removed or replaced while the agent ran and cannot be made again (\(String(cString: strerror(code)))): requests wait for the store until the next start; if another agent now uses this store, stop one of them")
            return false
        }
        Self.unlock(state.descriptor)
        Self.lockedHere.withLock { _ = $0.insert(FileID(fresh)) }
        state.descriptor = fresh
        logger.warning("store: the run journal \(path) was removed while the agent ran; it is made again, with the \(state.size) bytes it held")
        return true
    }

    /// Whether the file holds lines past the store's mark that may be written meanwhile: the
    /// store gave up changes as invalid in this life (``pin()``), or the open could not replay
    /// the file (its lines wait for the next one). Runs are not pruned then: the next open
    /// would make a pruned one again from its line, and it would run again.
    package var keepsRunsFromPruning: Bool { mark == .max || state.withLock(\.pinned) }

    /// Whether the store may write a mark (see ``pin()``).
    package var marks: Bool { isEnabled && !state.withLock(\.pinned) }

    /// The store has committed every journaled run up to `seq` (on the writer thread): the
    /// file is emptied when nothing newer waits in it.
    package func committed(through seq: UInt64) {
        state.withLock { state in
            state.committed = max(state.committed, seq)
            guard !state.pinned, state.committed == state.appended, state.descriptor >= 0 else { return }
            if state.size > 0, relinked(&state), ftruncate(state.descriptor, 0) == 0 { state.size = 0 }
            state.room?.reset()
            state.inRoom = false
        }
    }

    /// The store gave up changes of runs as invalid (a journaled run's first record may be
    /// among them): no mark is written after it, so that the next open writes what the store
    /// lacks, requests wait for the store until then, and runs are not pruned
    /// (``keepsRunsFromPruning``).
    package func pin() {
        let first = state.withLock { state -> Bool in
            defer { state.pinned = true }
            return !state.pinned
        }
        if first {
            logger.warning("store: the run journal \(path) keeps its lines until the next start, which writes what the database lacks of them; until then finished runs are not pruned (`max_runs`, `max_age`), since a pruned one would be made again")
        }
    }

    /// Lets the lock go (the store's writer has ended).
    package func close() {
        state.withLock { state in
            if state.descriptor >= 0 { Self.unlock(state.descriptor) }
            state.descriptor = -1
            state.room?.close()
        }
    }

    /// Bytes in the file (for tests).
    package var size: Int { state.withLock(\.size) }

    private static func writeAll(_ descriptor: Int32, _ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress! + offset, $0.count - offset) }
            if written < 0, errno == EINTR { continue }
            guard written > 0 else { return false }
            offset += written
        }
        return true
    }
}

/// Why the store could not be opened: what to do about it.
package struct StoreOpenError: Error, CustomStringConvertible {
    package let description: String

    package init(_ description: String) { self.description = description }
}
