import AgentCore
import CAgentSystem
import Foundation
import GRDBSQLite
import Logging

/// Copies the store's WAL back into the database (a checkpoint) on a thread of its own, so
/// that the writer thread does not: SQLite's automatic checkpoint ran inside the writer's
/// commit, so that a commit crossing 4 MiB of WAL copied it back and fsynced the database
/// before its events were acknowledged (0.1–0.4 µs of the writer's CPU per event;
/// benchmarks/HISTORY.md, stop 61).
///
/// The writer's connection reports, after each commit, how many frames its WAL holds (SQLite's
/// WAL hook). From ``AgentStore/checkpointBytes`` on (4 MiB), the thread is asked for a
/// passive checkpoint on a connection of its own, where SQLite ran one in the writer: the
/// writer does not wait for it. Once every frame is copied back, SQLite starts the WAL over at
/// the next transaction, so a WAL that grows more slowly than the thread copies stays at that
/// size. Under a steady load the writer's next transactions land before the thread is done; so
/// at twice the size the writer waits for the thread and copies the rest itself, and the WAL
/// stays within 8 MiB and one transaction — unless a checkpoint of the thread outlasts the
/// writer's wait (a slow disk: the writer then copies nothing, as the thread holds the
/// checkpoint, and tries again at its next commit) or a reader holds older frames (a passive
/// checkpoint copies up to the oldest reader's snapshot, as SQLite's did).
///
/// A commit that crosses 4 MiB while the thread's checkpoint runs asks for nothing: the next
/// commit does. A checkpoint that fails (a full disk, another process checkpointing) is left
/// to the next one, as SQLite's automatic checkpoint leaves it; nothing acknowledged depends
/// on it.
package final class WALCheckpointer: Sendable {
    private let path: String
    private let logger: Logger
    private let writerWait: Double
    private let state = Guarded(State())

    /// The longest the writer waits for the thread's checkpoint, by default.
    static let writerWait: Double = 2

    /// Checkpoints that returned with frames copied back, by the thread and by the writer (at
    /// 8 MiB, or at 4 MiB without the thread), and the writer's waits that ended with the
    /// thread's checkpoint still running.
    package struct Counts: Sendable {
        package var byThread = 0
        package var byWriter = 0
        package var writerWaitsTimedOut = 0
    }

    private struct State {
        /// Frames (pages) in the WAL from which the thread checkpoints (the writer from twice).
        var checkpointPages = Int.max
        var started = false
        var requested = false
        var running = false
        var stopping = false
        var stopped = false
        /// The thread could not open its connection: the writer checkpoints, as SQLite did.
        var unavailable = false
        var counts = Counts()
    }

    init(path: String, logger: Logger, writerWait: Double) {
        self.path = path
        self.logger = logger
        self.writerWait = writerWait
    }

    /// What the checkpoints did so far.
    var counts: Counts { state.withLock { $0.counts } }

    /// Installs the WAL hook on the writer's `connection` in place of SQLite's automatic
    /// checkpoint every `checkpointPages` frames. The checkpointer must outlive the connection.
    func install(on connection: OpaquePointer?, checkpointPages: Int) {
        state.withLock { $0.checkpointPages = max(1, checkpointPages) }
        sqlite3_wal_autocheckpoint(connection, 0)
        sqlite3_wal_hook(connection, { argument, connection, _, frames in
            Unmanaged<WALCheckpointer>.fromOpaque(argument!).takeUnretainedValue().walGrew(frames: Int(frames), connection: connection)
            return SQLITE_OK
        }, Unmanaged.passUnretained(self).toOpaque())
    }

    private enum Step { case none, startThread, signalThread, checkpointHere }

    /// After a commit on the writer's connection (the writer thread's, or a migration's or a
    /// `withWriter` caller's, on theirs), with the WAL's frame count.
    private func walGrew(frames: Int, connection: OpaquePointer?) {
        let step = state.withLock { state -> Step in
            guard frames >= state.checkpointPages else { return .none }
            // Without the thread, the writer checkpoints where SQLite did.
            if state.unavailable || state.stopping || frames >= state.checkpointPages * 2 { return .checkpointHere }
            // One checkpoint at a time, each with its fsyncs: none is queued behind a running one.
            guard !state.running, !state.requested else { return .none }
            state.requested = true
            defer { state.started = true }
            return state.started ? .signalThread : .startThread
        }
        switch step {
        case .none: return
        case .startThread:
            if let refused = SystemThread.run(AgentStore.checkpointThreadName, { [self] in run() }) {
                finish(unavailable: true)
                logger.warning("store: \(refused); the writer checkpoints the WAL itself, as SQLite does")
            }
        case .signalThread: state.broadcast()
        case .checkpointHere:
            let deadline = Date().addingSaturated(writerWait)
            let threadBusy = state.withLock(waitingUntil: { ($0.running || $0.requested) && !$0.stopped ? deadline : nil }) { state in
                if state.running { state.counts.writerWaitsTimedOut += 1 }
                return state.running
            }
            // The thread holds the checkpoint: SQLite would refuse the writer's at once.
            guard !threadBusy else { return }
            if Self.checkpoint(connection) { state.withLock { $0.counts.byWriter += 1 } }
        }
    }

    private func run() {
        agent_set_thread_name(AgentStore.checkpointThreadName)
        var connection: OpaquePointer?
        // A read opens the WAL: a connection that has read nothing has none to checkpoint.
        // The busy timeout is for that read (a passive checkpoint never waits).
        let opened = sqlite3_open_v2(path, &connection, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, nil)
        guard opened == SQLITE_OK, sqlite3_busy_timeout(connection, 5_000) == SQLITE_OK,
              sqlite3_exec(connection, "SELECT count(*) FROM sqlite_master", nil, nil, nil) == SQLITE_OK else {
            let reason = connection.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(opened))
            sqlite3_close_v2(connection)
            finish(unavailable: true)
            logger.warning("store: the WAL's checkpoint thread cannot open \(path) (\(reason)); the writer checkpoints it itself, as SQLite does")
            return
        }
        while state.withLock(waitingUntil: { $0.requested || $0.stopping ? nil : .distantFuture }, { state -> Bool in
            guard !state.stopping else { return false }
            state.requested = false
            state.running = true
            return true
        }) {
            let copied = Self.checkpoint(connection)
            state.withLock {
                $0.running = false
                if copied { $0.counts.byThread += 1 }
            }
            state.broadcast()
        }
        sqlite3_close_v2(connection)
        finish(unavailable: false)
    }

    /// A passive checkpoint; whether it copied frames back.
    private static func checkpoint(_ connection: OpaquePointer?) -> Bool {
        var frames: Int32 = 0, copied: Int32 = 0
        return sqlite3_wal_checkpoint_v2(connection, nil, SQLITE_CHECKPOINT_PASSIVE, &frames, &copied) == SQLITE_OK && copied > 0
    }

    private func finish(unavailable: Bool) {
        state.withLock {
            $0.running = false
            $0.requested = false
            $0.stopped = true
            $0.unavailable = $0.unavailable || unavailable
        }
        state.broadcast()
    }

    /// Ends the thread (waits up to `timeout` seconds for its checkpoint to end); from then
    /// on the writer checkpoints itself.
    func stop(timeout: Double = 10) {
        let started = state.withLock { state -> Bool in
            state.stopping = true
            return state.started
        }
        state.broadcast()
        guard started else { return }
        let deadline = Date().addingSaturated(timeout)
        state.withLock(waitingUntil: { $0.stopped ? nil : deadline }) { _ in }
    }
}
