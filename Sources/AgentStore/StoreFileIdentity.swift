import Foundation

/// The database file the store opened, by device and inode. A store whose file was removed (by
/// hand, by a cleaner of old files, with the whole `.agent` folder) or replaced under a running
/// agent went on writing into the removed file unnoticed: everything acknowledged since was
/// gone at the next start, which made a new, empty store. The writer checks, at most once a
/// second, that the path still names its file, and stops acknowledging writes when it does not.
struct StoreFileIdentity: Sendable {
    let path: String
    let device: UInt64
    let inode: UInt64
    /// When the path was last looked at (monotonic seconds).
    private var checkedAt = -Double.infinity

    /// The file at `path` now; nil when it cannot be read (then nothing is checked).
    init?(path: String) {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        self.path = path
        device = UInt64(info.st_dev)
        inode = UInt64(info.st_ino)
    }

    /// Why the store must not write: its path names another file or none.
    struct Gone: Error, CustomStringConvertible {
        var path: String
        var replaced: Bool
        /// Where the removed file can still be read while the agent runs (`/proc/PID/fd/N`).
        var stillOpenAt: String?

        var description: String {
            let copy = stillOpenAt.map { " (copy it first from \($0) if its history matters: `cp \($0) \(StoreFileIdentity.savedCopy(of: path))`)" } ?? ""
            return "the database file \(path) was \(replaced ? "replaced by another file" : "removed") while the agent ran: what is written to it now would be lost at the next start, so nothing more is stored or acknowledged. Restart the agent (`agent-control restart`) to store again\(copy)"
        }
    }

    /// Where to advise a copy: beside the database, or in the nearest folder still there (the
    /// whole `.agent/data` may have been removed).
    static func savedCopy(of path: String) -> String {
        var folder = (path as NSString).deletingLastPathComponent
        while !folder.isEmpty, folder != "/", !FileManager.default.fileExists(atPath: folder) {
            folder = (folder as NSString).deletingLastPathComponent
        }
        return (folder.isEmpty ? "." : folder == "/" ? "" : folder) + "/" + (path as NSString).lastPathComponent + ".saved"
    }

    /// Throws ``Gone`` when the path no longer names the file opened; looks at most once a
    /// second (`now`: monotonic seconds), and at every call once it found it gone.
    mutating func check(now: Double) throws(Gone) {
        guard now - checkedAt >= 1 else { return }
        checkedAt = now
        var info = stat()
        let exists = stat(path, &info) == 0
        // Only a path that names nothing is a removed file: a permission taken away, or a
        // network file system's passing error, says nothing of it.
        if !exists, errno != ENOENT, errno != ENOTDIR { return }
        guard !exists || UInt64(info.st_dev) != device || UInt64(info.st_ino) != inode else { return }
        checkedAt = -Double.infinity
        throw Gone(path: path, replaced: exists, stillOpenAt: Self.openDescriptor(device: device, inode: inode))
    }

    /// This process's descriptor of the file `device`/`inode` as a /proc path, if it has one.
    private static func openDescriptor(device: UInt64, inode: UInt64) -> String? {
        let folder = "/proc/\(getpid())/fd"
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
        for name in names.sorted(by: { (Int($0) ?? 0) < (Int($1) ?? 0) }) {
            var info = stat()
            guard stat(folder + "/" + name, &info) == 0, UInt64(info.st_dev) == device, UInt64(info.st_ino) == inode else { continue }
            return folder + "/" + name
        }
        return nil
    }
}
