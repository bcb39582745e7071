import Glibc

/// Bytes of the disk kept aside in a file of their own (`agent.sqlite-room` beside the
/// store), given back when the disk is full so that the run journal can still write the
/// changes of runs the database could not, and taken again once the database writes.
///
/// A file of its own, not blocks kept ahead of the journal's end (`fallocate` with
/// `FALLOC_FL_KEEP_SIZE`): the journal is emptied after each commit, which gives such blocks
/// back, and keeping them again each time cost 150–300 µs a commit on ext4 here.
struct DiskRoom {
    /// The bytes kept: a few thousand changes of runs.
    static let bytes = 2 << 20

    let path: String
    /// -1 before the first ``take()``; -2 when the file cannot be opened (not tried again).
    private var descriptor: Int32 = -1
    /// Whether the bytes are kept (false until ``take()`` could, and once given back).
    private(set) var isKept = false
    /// When ``take()`` last tried (monotonic seconds; 0: never).
    private var lastTry = 0.0

    /// The room at `path`, taken by ``take()`` (the store's writer takes it after its first
    /// write, off the agent's start).
    init(path: String) {
        self.path = path
    }

    /// Gives the bytes back to the disk; whether there were any to give.
    mutating func giveBack() -> Bool {
        guard isKept, descriptor >= 0 else { return false }
        isKept = false
        return ftruncate(descriptor, 0) == 0
    }

    /// Takes the bytes again, when the disk has them and a MiB more free: at most every 5 s
    /// (each commit asks), and never taking the last of the disk (a refused allocation takes
    /// what it can first, which would fill the disk for a moment for everything else on it).
    mutating func take() {
        if descriptor == -1 {
            let opened = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
            descriptor = opened >= 0 ? opened : -2
        }
        guard !isKept, descriptor >= 0 else { return }
        var clock = timespec()
        clock_gettime(CLOCK_MONOTONIC, &clock)
        let now = Double(clock.tv_sec) + Double(clock.tv_nsec) / 1e9
        guard lastTry == 0 || now - lastTry >= 5 else { return }
        lastTry = now
        var disk = statvfs()
        guard fstatvfs(descriptor, &disk) == 0, UInt64(disk.f_bavail) * UInt64(disk.f_frsize) >= UInt64(Self.bytes + (1 << 20)) else { return }
        isKept = posix_fallocate(descriptor, 0, off_t(Self.bytes)) == 0
        // What a refused allocation took in part is given back.
        if !isKept { _ = ftruncate(descriptor, 0) }
    }

    mutating func close() {
        if descriptor >= 0 { Glibc.close(descriptor) }
        descriptor = -2
    }
}
