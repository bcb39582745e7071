import Foundation
import Synchronization

/// The journal as the store's lock (see ``RunJournal``).
///
/// A `flock` belongs to the open file, and a child forked by any thread of the agent holds a
/// copy of every descriptor until its `exec` closes it (`O_CLOEXEC`). A store closed and opened
/// again in one process can so find its own lock still held for the moment a child takes to
/// exec — long on a loaded machine. The lock is told apart from another agent's by the
/// process `/proc/locks` names as its taker, and by the locks this process's open stores hold.
extension RunJournal {
    /// A file's device and inode.
    struct FileID: Hashable {
        let device: UInt64
        let inode: UInt64

        init(device: UInt64, inode: UInt64) {
            self.device = device
            self.inode = inode
        }

        /// The file `descriptor` is open on.
        init(_ descriptor: Int32) {
            var status = stat()
            if fstat(descriptor, &status) == 0 {
                self.init(device: UInt64(status.st_dev), inode: UInt64(status.st_ino))
            } else {
                self.init(device: .max, inode: .max)
            }
        }
    }

    /// The journals this process's open stores hold.
    static let lockedHere = Mutex<Set<FileID>>([])

    /// The longest an open waits for its own process's lock, left in a child about to exec.
    static let longestWaitForOwnLock = 5.0

    /// Opens and locks the journal of the database at `databasePath`, before the database
    /// is opened. Throws when it is not a regular file the agent can write, or when another
    /// agent holds it.
    package static func lock(for databasePath: String) throws -> Int32 {
        var database = stat()
        if stat(databasePath, &database) == 0, database.st_nlink > 1 {
            // SQLite finds a WAL and its locks by the name it is given: a second name gets a
            // WAL of its own, and a journal and lock of its own here.
            throw StoreOpenError("its database \(databasePath) has \(database.st_nlink) names (hard links); an agent that opened it by another name would keep a WAL and a lock of its own beside it, which corrupts the database: remove the other names (`find / -xdev -samefile \(databasePath)` lists them)")
        }
        let path = path(for: databasePath)
        let descriptor = open(path, O_RDWR | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            let code = errno
            throw StoreOpenError(code == ELOOP ? "its run journal \(path) is a symbolic link; it must be a regular file: remove the link"
                                 : "cannot open its run journal \(path): \(String(cString: strerror(code))); it must be a regular file the agent can write")
        }
        var status = stat()
        guard fstat(descriptor, &status) == 0, status.st_mode & S_IFMT == S_IFREG else {
            Glibc.close(descriptor)
            throw StoreOpenError("its run journal \(path) is not a regular file: remove what is there")
        }
        let file = FileID(device: UInt64(status.st_dev), inode: UInt64(status.st_ino))
        let code = takeLock(descriptor, file)
        guard code == 0 else {
            Glibc.close(descriptor)
            throw StoreOpenError(code == EWOULDBLOCK ? "another agent uses this store (it holds \(path)): two agents on one store would run each other's runs; give each agent a \"store\" \"path\" of its own"
                                 : "cannot lock its run journal \(path): \(String(cString: strerror(code)))")
        }
        return descriptor
    }

    /// Locks `descriptor` (on `file`) and notes it as held here; 0 or the error. Waits while the
    /// lock is this process's own, left in a child about to exec, not one an open store holds.
    private static func takeLock(_ descriptor: Int32, _ file: FileID) -> Int32 {
        let deadline = Date().addingTimeInterval(longestWaitForOwnLock)
        var pause: UInt32 = 1_000
        // A lock let go between the try and the read of /proc/locks has no taker there: tried
        // again, a few times (a device /proc/locks names otherwise never shows one).
        var triesWithoutTaker = 3
        while true {
            // Checked and taken under the mutex: another store of this process opening the same
            // file meanwhile either sees it held here or finds it locked.
            let (code, heldHere) = lockedHere.withLock { held -> (Int32, Bool) in
                if held.contains(file) { return (EWOULDBLOCK, true) }
                guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else { return (errno, false) }
                held.insert(file)
                return (0, false)
            }
            guard code == EWOULDBLOCK, !heldHere, Date() < deadline else { return code }
            let takers = takers(of: file)
            if takers.isEmpty, triesWithoutTaker > 0 {
                triesWithoutTaker -= 1
                continue
            }
            guard takers.contains(getpid()) else { return code }
            usleep(pause)
            pause = min(pause * 2, 20_000)
        }
    }

    /// Lets the lock on `descriptor` go and closes it.
    static func unlock(_ descriptor: Int32) {
        let file = FileID(descriptor)
        lockedHere.withLock { _ = $0.remove(file) }
        Glibc.close(descriptor)
    }

    /// The processes `/proc/locks` names as the takers of `flock` locks on `file` (its lines:
    /// `1: FLOCK  ADVISORY  WRITE 7261 fe:00:16220985 0 EOF`, the device in hex).
    static func takers(of file: FileID) -> [pid_t] {
        let device = "\(String(major(file.device), radix: 16, uppercase: false).leftPadded(to: 2)):\(String(minor(file.device), radix: 16).leftPadded(to: 2)):\(file.inode)"
        guard let text = try? String(contentsOfFile: "/proc/locks", encoding: .utf8) else { return [] }
        return text.split(separator: "\n").compactMap { line in
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count >= 6, fields[1] == "FLOCK", fields[5] == device else { return nil }
            return pid_t(fields[4])
        }
    }

    private static func major(_ device: UInt64) -> UInt64 { ((device >> 32) & 0xffff_f000) | ((device >> 8) & 0xfff) }
    private static func minor(_ device: UInt64) -> UInt64 { ((device >> 12) & 0xffff_ff00) | (device & 0xff) }
}

private extension String {
    func leftPadded(to width: Int) -> String { count >= width ? self : String(repeating: "0", count: width - count) + self }
}
