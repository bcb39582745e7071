import AgentBase
import Foundation

/// A file that JSON lines are appended to, rotated by size: when the next line would take it
/// past `maxBytes`, `path` becomes `path.1`, `path.1` becomes `path.2`, … and `path.keep`
/// is removed. A single line larger than `maxBytes` still goes whole into a file of its own.
package final class RotatingFile {
    /// Why the file could not be opened, written or rotated.
    package struct Failure: Error, CustomStringConvertible {
        package let description: String
    }

    package let path: String
    package let maxBytes: Int
    package let keep: Int
    /// The open descriptor, or -1 (closed after a failure; `open` is tried again later).
    package private(set) var descriptor: Int32 = -1
    /// Bytes in the file, as far as this process knows.
    package var size = 0

    package init(path: String, maxBytes: Int, keep: Int) {
        self.path = path
        self.maxBytes = maxBytes
        self.keep = keep
    }

    /// Opens (or creates, with its folder) the file for appending.
    package func open() throws(Failure) {
        guard descriptor < 0 else { return }
        let folder = (path as NSString).deletingLastPathComponent
        if !folder.isEmpty {
            // The user's destination: readable by others as a file would be, never writable.
            _ = try? PrivateFiles.makeDirectories(folder, mode: 0o755)
        }
        let fd = Glibc.open(path, O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw Failure(description: "cannot open \(path): \(Self.errorText())") }
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            let text = Self.errorText()
            Glibc.close(fd)
            throw Failure(description: "cannot stat \(path): \(text)")
        }
        descriptor = fd
        size = Int(info.st_size)
        // A line cut short (a crash, a full disk) would glue itself to the next one: end it.
        // (Hence O_RDWR: the last byte is read back.)
        if size > 0 {
            var last: UInt8 = 0
            if pread(fd, &last, 1, off_t(size - 1)) == 1, last != 10 {
                var newline: UInt8 = 10
                if Glibc.write(fd, &newline, 1) == 1 { size += 1 }
            }
        }
    }

    /// Whether a line of `count` bytes would take the file, with `pending` bytes still
    /// buffered for it, past `maxBytes` (an empty file takes any line).
    package func needsRotation(pending: Int, adding count: Int) -> Bool {
        let logical = size + pending
        return logical > 0 && logical + count > maxBytes
    }

    /// Shifts the rotated files by one and starts a new, empty `path`.
    package func rotate() throws(Failure) {
        close()
        var problem: String?
        if keep == 0 {
            if unlink(path) != 0, errno != ENOENT { problem = "cannot remove \(path): \(Self.errorText())" }
        } else {
            if unlink("\(path).\(keep)") != 0, errno != ENOENT { problem = "cannot remove \(path).\(keep): \(Self.errorText())" }
            for index in stride(from: keep - 1, through: 1, by: -1) {
                if rename("\(path).\(index)", "\(path).\(index + 1)") != 0, errno != ENOENT {
                    problem = problem ?? "cannot rename \(path).\(index): \(Self.errorText())"
                }
            }
            if rename(path, "\(path).1") != 0, errno != ENOENT {
                problem = problem ?? "cannot rename \(path) to \(path).1: \(Self.errorText())"
            }
        }
        try open()
        if let problem {
            // Keep appending to whatever `path` now is, and count from zero so that the next
            // attempt waits for another `maxBytes` rather than coming on every line.
            size = 0
            throw Failure(description: "rotation: \(problem)")
        }
    }

    package func close() {
        if descriptor >= 0 { Glibc.close(descriptor) }
        descriptor = -1
    }

    package static func errorText() -> String {
        String(cString: strerror(errno))
    }
}
