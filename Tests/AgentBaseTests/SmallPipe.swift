import Foundation
import Testing

/// A pipe that a few lines fill, for the writers that must never wait for a reader.
enum SmallPipe {
    /// A pipe whose kernel buffer is one page, so that a few lines fill it.
    static func make() throws -> (read: Int32, write: Int32) {
        var fds: [Int32] = [0, 0]
        try #require(pipe(&fds) == 0)
        // F_SETPIPE_SZ (1031), which Glibc's module does not import; one page here (x86-64's
        // 4 kB: a kernel of larger pages would make the amounts below too small to fill it).
        try #require(fcntl(fds[1], 1031, 4096) == 4096)
        return (fds[0], fds[1])
    }

    /// What the pipe holds now, after waiting up to 10 ms for something to come.
    static func readAvailable(_ fd: Int32) -> [UInt8] {
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        _ = poll(&poller, 1, 10)
        var all: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n <= 0 { break }
            all += chunk[0..<n]
        }
        return all
    }
}
