import ArgumentParser
import Foundation

/// The contents of an `@FILE` argument (`--input @run.json`, `@-` is not special): read with
/// `read(2)` to its end, so that a pipe, a FIFO or `/dev/stdin` works (Foundation's whole-file
/// read asked their size and said "Inappropriate ioctl for device"), and at most
/// ``largest`` bytes (`@/dev/zero` would never end).
enum ArgumentFile {
    /// The most bytes read: far above any request the agent takes.
    static let largest = 64 << 20

    /// `what` names the argument in errors (`--input @PATH`).
    static func read(_ path: String, what: String) throws -> Data {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw ValidationError("\(what): cannot open the file (\(String(cString: strerror(errno))))") }
        defer { close(fd) }
        var data = Data()
        var chunk = [UInt8](repeating: 0, count: 64 << 10)
        while true {
            let count = chunk.withUnsafeMutableBytes { Foundation.read(fd, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count >= 0 else { throw ValidationError("\(what): cannot read the file (\(String(cString: strerror(errno))))") }
            if count == 0 { return data }
            data.append(contentsOf: chunk[0..<count])
            guard data.count <= largest else { throw ValidationError("\(what): the file is larger than \(largest >> 20) MiB (a run's input or a value is at most 1 MiB): give a smaller file") }
        }
    }
}
