import Glibc

/// Bytes of the disk kept aside in a file of their own (`agent.sqlite-room` beside the
/// store), allocated ahead (`posix_fallocate`), into which the run journal writes the changes
/// of runs the database could not write once the disk is full: writing into blocks already
/// allocated needs none from the disk, so neither SQLite's retry nor another program filling
/// the disk can take them first. (Given back to the disk on the first failure, as first built,
/// SQLite's own retry took them and the next full spell found no room: an adversary's signal
/// answered then was lost by a kill.) The lines are zeroed once the store has written them;
/// the reader stops at the first zero byte.
///
/// A file of its own, not blocks kept ahead of the journal's end (`fallocate` with
/// `FALLOC_FL_KEEP_SIZE`): the journal is emptied after each commit, which gives such blocks
/// back, and keeping them again each time cost 150–300 µs a commit on ext4 here. (On a
/// copy-on-write file system, btrfs or ZFS, an overwrite may need new blocks all the same.)
struct DiskRoom {
    /// The bytes kept: a few thousand changes of runs.
    static let bytes = 2 << 20

    let path: String
    /// -1 before the first ``take()``; -2 when the file cannot be opened (not tried again).
    private var descriptor: Int32 = -1
    /// Whether the bytes are allocated.
    private(set) var isKept = false
    /// Bytes of lines written into it since the store last wrote everything.
    private(set) var used = 0
    /// When ``take()`` last tried (monotonic seconds; 0: never).
    private var lastTry = 0.0
    /// Whether ``take()`` said in the log that it could not keep the bytes.
    private(set) var refusalSaid = false

    /// The room at `path`, taken by ``take()`` (the store's writer takes it after its first
    /// write, off the agent's start).
    init(path: String) {
        self.path = path
    }

    /// Writes `line` into the kept blocks after the lines already there; whether it fit.
    mutating func write(_ line: [UInt8]) -> Bool {
        guard isKept, descriptor >= 0, used + line.count <= Self.bytes else { return false }
        var offset = 0
        while offset < line.count {
            let written = line.withUnsafeBytes { pwrite(descriptor, $0.baseAddress! + offset, $0.count - offset, off_t(used + offset)) }
            if written < 0, errno == EINTR { continue }
            guard written > 0 else {
                // What was written in part is zeroed, so that the next line starts where this did;
                // the room is not counted on again until it is allocated anew (a copy-on-write file
                // system, or the file removed, refuses writes into blocks it had).
                Self.zero(descriptor, from: used, to: used + offset)
                isKept = false
                return false
            }
            offset += written
        }
        used += line.count
        return true
    }

    /// The store has written every line: they are zeroed (the blocks stay allocated).
    mutating func reset() {
        guard used > 0, descriptor >= 0 else { return }
        Self.zero(descriptor, from: 0, to: used)
        used = 0
    }

    /// Allocates the bytes, when the disk has them and a MiB more free: at most every 5 s
    /// (each commit asks), and never taking the last of the disk (a refused allocation takes
    /// what it can first, which would fill the disk for a moment for everything else on it).
    /// Returns the free bytes when the disk had too few (to say so once), else nil.
    mutating func take() -> UInt64? {
        if descriptor == -1 {
            let opened = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
            descriptor = opened >= 0 ? opened : -2
        }
        guard !isKept, descriptor >= 0 else { return nil }
        var clock = timespec()
        clock_gettime(CLOCK_MONOTONIC, &clock)
        let now = Double(clock.tv_sec) + Double(clock.tv_nsec) / 1e9
        guard lastTry == 0 || now - lastTry >= 5 else { return nil }
        lastTry = now
        var disk = statvfs()
        var facts = stat()
        guard fstatvfs(descriptor, &disk) == 0, fstat(descriptor, &facts) == 0 else { return nil }
        let free = UInt64(disk.f_bavail) * UInt64(disk.f_frsize)
        // Blocks the file holds already (an earlier start's) need no more from the disk.
        let held = UInt64(max(0, Int64(facts.st_blocks))) * 512
        guard free + min(held, UInt64(Self.bytes)) >= UInt64(Self.bytes + (1 << 20)) else {
            defer { refusalSaid = true }
            return refusalSaid ? nil : free
        }
        isKept = posix_fallocate(descriptor, 0, off_t(Self.bytes)) == 0
        // What a refused allocation took in part is given back.
        if !isKept { _ = ftruncate(descriptor, 0) }
        return nil
    }

    mutating func close() {
        if descriptor >= 0 { Glibc.close(descriptor) }
        descriptor = -2
    }

    /// Zeros the bytes from `start` to `end` (in the allocated blocks: no room needed).
    private static func zero(_ descriptor: Int32, from start: Int, to end: Int) {
        let zeros = [UInt8](repeating: 0, count: 64 << 10)
        var offset = start
        while offset < end {
            let chunk = min(zeros.count, end - offset)
            let written = zeros.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, chunk, off_t(offset)) }
            if written < 0, errno == EINTR { continue }
            guard written > 0 else { return }
            offset += written
        }
    }

    /// Zeros the lines a room at `path` holds (after the open wrote them to the database);
    /// whether it holds none now.
    static func clearLines(at path: String) -> Bool {
        let descriptor = open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW)
        guard descriptor >= 0 else { return errno == ENOENT }
        defer { Glibc.close(descriptor) }
        let length = linesLength(descriptor)
        guard length > 0 else { return true }
        zero(descriptor, from: 0, to: length)
        return linesLength(descriptor) == 0
    }

    /// Gives back to the disk what a room at `path` holds past its lines (all of it when it
    /// holds none): for the open's own writes on a full disk. The lines stay.
    static func shrinkToLines(at path: String) {
        let descriptor = open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW)
        guard descriptor >= 0 else { return }
        defer { Glibc.close(descriptor) }
        let length = linesLength(descriptor)
        _ = ftruncate(descriptor, off_t((length + 4095) / 4096 * 4096))
    }

    /// Whether a room at `path` holds lines (its first byte is not zero).
    static func holdsLines(at path: String) -> Bool {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        guard descriptor >= 0 else { return false }
        defer { Glibc.close(descriptor) }
        var first: UInt8 = 0
        return pread(descriptor, &first, 1, 0) == 1 && first != 0
    }

    /// Bytes before the first zero byte.
    private static func linesLength(_ descriptor: Int32) -> Int {
        var chunk = [UInt8](repeating: 0, count: 64 << 10)
        var offset = 0
        while true {
            let count = chunk.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, $0.count, off_t(offset)) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { return offset }
            if let zero = chunk[0..<count].firstIndex(of: 0) { return offset + zero }
            offset += count
        }
    }
}
