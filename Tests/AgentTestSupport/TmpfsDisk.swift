import Foundation

/// A small tmpfs a test fills and frees, for a disk that fills up for real: mounted on `path`
/// in a new temporary folder, unmounted (and the folder removed) by ``unmount()`` or at deinit.
/// Mounting needs root: where it is not permitted, ``init(size:name:)`` throws, saying so (a test
/// of a full disk that cannot fill one fails rather than passes).
package final class TmpfsDisk {
    /// The temporary folder the disk is mounted in (at `disk`).
    package let directory: String
    /// Where it is mounted.
    package var path: String { directory + "/disk" }
    /// The file ``fill()`` writes and ``free()`` removes.
    package var filler: String { path + "/filler" }
    private var mounted = true

    /// Whether this process may mount a tmpfs.
    package static let canMount: Bool = {
        let probe = TestPaths.temporaryDirectory("mount-probe")
        defer { try? FileManager.default.removeItem(atPath: probe) }
        guard (try? runProgram("/bin/mount", ["-t", "tmpfs", "-o", "size=64k", "tmpfs", probe]))?.status == 0 else { return false }
        _ = try? runProgram("/bin/umount", [probe])
        return true
    }()

    /// Mounts a tmpfs of `size` (mount's syntax: "2m") in a new temporary folder named after `name`.
    package init(size: String, name: String) throws {
        directory = TestPaths.temporaryDirectory(name)
        let disk = directory + "/disk"
        try FileManager.default.createDirectory(atPath: disk, withIntermediateDirectories: true)
        let result = try runProgram("/bin/mount", ["-t", "tmpfs", "-o", "size=\(size)", "tmpfs", disk])
        guard result.status == 0 else {
            try? FileManager.default.removeItem(atPath: directory)
            throw HTTPProbe.Failure(description: "cannot mount a tmpfs on \(disk) (this test needs root to fill a disk): \(result.stderr)")
        }
    }

    deinit { unmount() }

    /// Writes ``filler`` until the disk is full; returns the bytes written.
    @discardableResult
    package func fill() -> Int {
        let fd = open(filler, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        defer { close(fd) }
        let block = [UInt8](repeating: 0x5A, count: 64 << 10)
        var total = 0
        while true {
            let n = block.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            if n <= 0 { return total }
            total += n
        }
    }

    /// Room again: removes ``filler``.
    package func free() throws {
        try FileManager.default.removeItem(atPath: filler)
    }

    /// Unmounts the disk (lazily: an agent may still hold a file on it) and removes the folder.
    /// Idempotent.
    package func unmount() {
        guard mounted else { return }
        mounted = false
        _ = try? runProgram("/bin/umount", ["-l", path])
        try? FileManager.default.removeItem(atPath: directory)
    }
}
