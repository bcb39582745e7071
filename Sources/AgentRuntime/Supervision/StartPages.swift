import AgentLoop
import Foundation
import Logging

/// The pages of agent-control's own code that only the start touched (argument parsing, the
/// settings' validation, the first spawns): about half of an idle supervisor's memory, given
/// back once the start is over.
///
/// Every mapping of the executable that was never written — code and constants; not its data,
/// not the relocated read-only data, which have copied-on-write (anonymous) pages, resident or
/// swapped out (smaps counts a swapped-out copy under `Swap:`, not `Anonymous:`) — is
/// unmapped with `MADV_DONTNEED`. The pages stay in the page cache: one used again is mapped
/// again at its next touch (a minor fault), so the resident memory becomes what the supervisor
/// runs on. Safe for such mappings only: the file's content is what was there.
package enum StartPages {
    /// What one release did: the bytes unmapped, or why nothing was.
    package struct Outcome: Sendable {
        package var bytes = 0
        package var problem: String?
    }

    /// Once `settled` says every first start has settled, gives back the code pages only the
    /// start touched, on a thread of its own (reading smaps takes a few ms). Looked at twice a
    /// second until then, not every turn; nothing once `stopping` says the agent stops.
    @LoopActor
    package static func releaseOnceSettled(loop: EventLoop, logger: Logger, stopping: @escaping @LoopActor () -> Bool, settled: @escaping @LoopActor () -> Bool) {
        loop.schedule(after: 0.5) {
            guard !stopping() else { return }
            guard settled() else { return releaseOnceSettled(loop: loop, logger: logger, stopping: stopping, settled: settled) }
            Thread.detachNewThread {
                let outcome = release()
                logger.debug("the start's code pages given back (of \(outcome.bytes >> 20) MB of code mapped)\(outcome.problem.map { "; \($0)" } ?? "")")
            }
        }
    }

    /// Releases the executable's never-written mappings of this process (see the type).
    package static func release() -> Outcome {
        guard let executable = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") else {
            return Outcome(problem: "cannot read /proc/self/exe")
        }
        guard let smaps = read("/proc/self/smaps") else { return Outcome(problem: "cannot read /proc/self/smaps") }
        var outcome = Outcome()
        for mapping in mappings(in: smaps, of: executable) where mapping.copiedKB == 0 && !mapping.writable {
            guard madvise(UnsafeMutableRawPointer(bitPattern: mapping.start), mapping.end - mapping.start, MADV_DONTNEED) == 0 else {
                outcome.problem = "madvise: \(String(cString: strerror(errno)))"
                continue
            }
            outcome.bytes += mapping.end - mapping.start
        }
        return outcome
    }

    /// One mapping of the executable, from its smaps header line and fields.
    struct Mapping {
        var start: Int
        var end: Int
        var writable: Bool
        /// Copied-on-write kB, resident (`Anonymous:`) or swapped out (`Swap:`).
        var copiedKB: Int
    }

    /// The mappings of `path` in smaps text, with their copied-on-write kB (resident or swapped out). A
    /// mapping's header is `start-end perms offset device inode path`; its fields (`Rss:`,
    /// `Anonymous:`, …) follow it, each named with a colon.
    static func mappings(in smaps: String, of path: String) -> [Mapping] {
        var found: [Mapping] = []
        var current: Mapping?
        for line in smaps.split(separator: "\n", omittingEmptySubsequences: true) {
            let first = line.prefix { $0 != " " }
            if first.hasSuffix(":") {
                if line.hasPrefix("Anonymous:") || line.hasPrefix("Swap:"), current != nil {
                    current!.copiedKB += line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first.flatMap { Int($0) } ?? 0
                }
                continue
            }
            if let current { found.append(current) }
            current = nil
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            let range = first.split(separator: "-")
            guard fields.count >= 6, fields[5...].joined(separator: " ") == path, range.count == 2,
                  let start = Int(range[0], radix: 16), let end = Int(range[1], radix: 16), end > start else { continue }
            current = Mapping(start: start, end: end, writable: fields[1].contains("w"), copiedKB: 0)
        }
        if let current { found.append(current) }
        return found
    }

    private static func read(_ path: String) -> String? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let count = chunk.withUnsafeMutableBytes { Foundation.read(fd, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { break }
            bytes += chunk[0..<count]
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
