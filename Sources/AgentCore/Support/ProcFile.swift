import Glibc

/// Reads the files of /proc (and of /sys) with plain system calls. Foundation's
/// `String(contentsOfFile:)` leaks about 4 KB on every read of a file whose size the kernel
/// reports as 0, as every /proc file's is (swift-foundation on Swift 6.3: 20,000 reads of
/// `/proc/self/task/N/children` grew a process by 81 MB); the supervisor reads some on every
/// restart.
public enum ProcFile {
    /// The file's text, up to `limit` bytes (nil when it cannot be opened or read).
    public static func read(_ path: String, limit: Int = 64 << 20) -> String? {
        bytes(path, limit: limit).map { String(decoding: $0, as: UTF8.self) }
    }

    /// The file's bytes, up to `limit` (nil when it cannot be opened or read).
    public static func bytes(_ path: String, limit: Int = 64 << 20) -> [UInt8]? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes = [UInt8](repeating: 0, count: Swift.min(4096, Swift.max(limit, 0)))
        var count = 0
        while count < limit {
            if count == bytes.count { bytes.append(contentsOf: repeatElement(0, count: Swift.min(bytes.count, limit - count))) }
            let n = bytes.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress! + count, $0.count - count) }
            if n < 0, errno == EINTR { continue }
            if n < 0 { return nil }
            if n == 0 { break }
            count += n
        }
        bytes.removeLast(bytes.count - count)
        return bytes
    }
}
