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
/// store does not have are written first (``replay(path:into:logger:)``): what a crash left
/// in the file is queued again, and a run already written (perhaps finished and pruned since)
/// is never made again.
///
/// Not used with `synchronous: full` (a line would need a sync of its own), nor while the
/// store cannot write (the request then waits for the store, and is refused), nor once the
/// file holds ``sizeLimit`` bytes the store has not caught up with: the caller then waits for
/// the store's transaction, as before.
package final class RunJournal: Sendable {
    /// The file's path: the database's, with `-newruns`.
    package let path: String
    private let state: Mutex<State>

    private struct State {
        var descriptor: Int32 = -1
        /// The sequence number of the last line appended (and of the mark at the open).
        var appended: UInt64
        /// The highest sequence number the store has committed.
        var committed: UInt64
        /// Bytes in the file.
        var size = 0
        /// The store lost a journaled run's change (its retained changes overflowed): the file
        /// is kept as it is until the next open, which writes what the store lacks.
        var pinned = false
    }

    /// Bytes the file may hold before appends wait for the store to catch up.
    package static let sizeLimit = 1 << 20

    /// The journal's path for the database at `databasePath`.
    package static func path(for databasePath: String) -> String { databasePath + "-newruns" }

    /// The store's mark at the open: lines continue after it.
    package let mark: UInt64

    /// A journal whose lines continue after `mark` (the store's, after ``replay(path:into:logger:)``).
    package init(path: String, mark: UInt64) {
        self.path = path
        self.mark = mark
        state = Mutex(State(appended: mark, committed: mark))
    }

    /// The journal of the database at `databasePath`, once what a crash left in it is written
    /// (``replay(path:into:logger:)``). Nil with `synchronous: full`, or when that write
    /// failed: the file is then left for the next open, and requests wait for the store.
    package static func recovered(for databasePath: String, database: DatabaseQueue, synchronous full: Bool, logger: Logger) -> RunJournal? {
        let path = path(for: databasePath)
        do {
            let mark = try replay(path: path, into: database, logger: logger)
            return full ? nil : RunJournal(path: path, mark: mark)
        } catch {
            logger.error("store: the new runs in \(path) could not be written to the database (\(error)); they are tried again at the next start, and until then requests wait for the store")
            return nil
        }
    }

    deinit {
        state.withLock { if $0.descriptor >= 0 { close($0.descriptor) } }
    }

    /// Appends `run`; its sequence number once the line is in the file, nil when it is not
    /// (the file cannot be written, or is full): the caller then waits for the store.
    package func append(_ run: TaskRun) -> UInt64? {
        state.withLock { state -> UInt64? in
            guard !state.pinned, state.size < Self.sizeLimit else { return nil }
            if state.descriptor < 0 {
                state.descriptor = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o600)
                guard state.descriptor >= 0 else { return nil }
            }
            let seq = state.appended + 1
            var line = Array("{\"seq\":\(seq),\"run\":".utf8)
            line += Array(run.storedJSON.serialized().utf8)
            line += Array("}\n".utf8)
            guard Self.writeAll(state.descriptor, line) else {
                // A part written (a full disk) is cut off, so that the next line starts a line.
                _ = ftruncate(state.descriptor, off_t(state.size))
                return nil
            }
            state.appended = seq
            state.size += line.count
            return seq
        }
    }

    /// The store has committed every journaled run up to `seq` (on the writer thread): the
    /// file is emptied when nothing newer waits in it.
    package func committed(through seq: UInt64) {
        state.withLock { state in
            state.committed = max(state.committed, seq)
            guard !state.pinned, state.committed == state.appended, state.size > 0, state.descriptor >= 0 else { return }
            if ftruncate(state.descriptor, 0) == 0 { state.size = 0 }
        }
    }

    /// A journaled run's change was lost by the store (see ``State/pinned``).
    package func pin() { state.withLock { $0.pinned = true } }

    /// Bytes in the file (for tests and `status`).
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

    // MARK: At the open

    /// The store's mark: the highest sequence number of a journaled run it has written.
    package static func mark(in db: Database) throws -> UInt64 {
        UInt64(max(0, try Int64.fetchOne(db, sql: "SELECT seq FROM run_journal WHERE id = 1") ?? 0))
    }

    /// Writes the mark (in the transaction that writes the runs up to it).
    package static func setMark(_ seq: UInt64, in db: Database) throws {
        try db.execute(sql: "INSERT INTO run_journal (id, seq) VALUES (1, ?) ON CONFLICT(id) DO UPDATE SET seq = excluded.seq",
                       arguments: [Int64(clamping: seq)])
    }

    /// Writes the runs of the journal at `path` past the store's mark that the store does not
    /// have, moves the mark past them and empties the file. Returns the mark. A line cut short
    /// by a crash (its request was never answered) or one that is not a run is skipped.
    package static func replay(path: String, into database: DatabaseQueue, logger: Logger) throws -> UInt64 {
        let lines = FileManager.default.contents(atPath: path).map { Self.lines($0) } ?? []
        let (mark, written) = try database.write { db -> (UInt64, Int) in
            var mark = try Self.mark(in: db)
            var written = 0
            for (seq, run) in lines where seq > mark {
                mark = seq
                guard try Int.fetchOne(db, sql: "SELECT 1 FROM task_runs WHERE id = ?", arguments: [run.id]) == nil else { continue }
                try SQLiteRunStore.write([run], in: db)
                written += 1
            }
            try Self.setMark(mark, in: db)
            return (mark, written)
        }
        if written > 0 {
            logger.notice("store: \(written) acknowledged run(s) the agent had not written to its database when it stopped were found in \(path) and queued again")
        }
        if FileManager.default.fileExists(atPath: path), truncate(path, 0) != 0 {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: path])
        }
        return mark
    }

    /// The runs in the journal at `path` past the store's mark that the store lacks, in order:
    /// what a crash left for the next start to write (read beside a stopped agent; a running
    /// one writes them within its commit interval).
    package static func unwritten(path: String, reader: DatabaseQueue) throws -> [TaskRun] {
        guard let data = FileManager.default.contents(atPath: path), !data.isEmpty else { return [] }
        return try reader.read { db in
            // A store from before the journal has no mark, and no journal either.
            guard try db.tableExists("run_journal") else { return [] }
            let mark = try Self.mark(in: db)
            return try Self.lines(data).filter { seq, run in
                try seq > mark && Int.fetchOne(db, sql: "SELECT 1 FROM task_runs WHERE id = ?", arguments: [run.id]) == nil
            }.map(\.run)
        }
    }

    /// The runs in a journal's text, in order.
    static func lines(_ data: Data) -> [(seq: UInt64, run: TaskRun)] {
        data.split(separator: UInt8(ascii: "\n")).compactMap { line in
            guard let object = (try? JSONValue.parse(Data(line)))?.objectValue,
                  let number = object["seq"]?.numberValue?.intValue, number >= 1,
                  let run = object["run"].flatMap(TaskRun.init(stored:)) else { return nil }
            return (UInt64(number), run)
        }
    }
}
