import Foundation

/// The pages of a process's file mappings that were never written — code and constants of the
/// executable and of every library it loaded — given back once a start is over: agent-control
/// (``StartPages`` in AgentRuntime), the fork server after its warm-up and each worker a second
/// after its ready frame drop their mapping of them with `MADV_DONTNEED`.
///
/// A start touches far more of them (dynamic linking, the Swift runtime's first type lookups,
/// validating settings, loading a module; each fault maps 16 pages around it) than an idle
/// process runs on, and each page mapped counts in the process's RSS and PSS. The pages stay in
/// the page cache: one used again is mapped again at its next touch (a minor fault). Only
/// mappings that are not writable and hold no copied-on-write page (smaps `Anonymous:` and
/// `Swap:` both 0; relocated read-only data, RELRO, has such pages) are released: for those the
/// file is what the pages hold. The kernel may drop the same pages under memory pressure at any
/// time; this only does it sooner.
public enum CleanFilePages {
    /// One file mapping, from its smaps header line and fields.
    public struct Mapping: Equatable, Sendable {
        public var start: Int
        public var end: Int
        public var writable: Bool
        /// Copied-on-write kB, resident (`Anonymous:`) or swapped out (`Swap:`).
        public var copiedKB: Int
        public var path: String

        /// Whether its pages are all still the file's: not writable, nothing copied on write.
        public var isClean: Bool { !writable && copiedKB == 0 }
    }

    /// What one release did: the bytes of the mappings released, or why nothing was.
    public struct Outcome: Sendable {
        public var bytes = 0
        public var problem: String?
    }

    /// Releases this process's clean file mappings (see the type). Any thread; a read of
    /// /proc/self/smaps (a millisecond or two).
    public static func release() -> Outcome {
        guard let smaps = read("/proc/self/smaps") else { return Outcome(problem: "cannot read /proc/self/smaps") }
        var outcome = Outcome()
        for mapping in fileMappings(in: smaps) where mapping.isClean {
            guard madvise(UnsafeMutableRawPointer(bitPattern: mapping.start), mapping.end - mapping.start, MADV_DONTNEED) == 0 else {
                outcome.problem = "madvise: \(String(cString: strerror(errno)))"
                continue
            }
            outcome.bytes += mapping.end - mapping.start
        }
        return outcome
    }

    /// The file mappings (a path starting with `/`) in smaps text, with their copied-on-write
    /// kB. A mapping's header is `start-end perms offset device inode [path]`; its fields
    /// (`Rss:`, `Anonymous:`, …) follow it, each a name and a colon.
    public static func fileMappings(in smaps: [UInt8]) -> [Mapping] {
        var found: [Mapping] = []
        var current: Mapping?
        var lineStart = 0
        while lineStart < smaps.count {
            var lineEnd = lineStart
            while lineEnd < smaps.count, smaps[lineEnd] != UInt8(ascii: "\n") { lineEnd += 1 }
            let line = smaps[lineStart..<lineEnd]
            lineStart = lineEnd + 1
            let space = line.firstIndex(of: UInt8(ascii: " ")) ?? line.endIndex
            if line[line.startIndex..<space].last == UInt8(ascii: ":") {
                if current != nil, line.starts(with: "Anonymous:".utf8) || line.starts(with: "Swap:".utf8) {
                    current!.copiedKB += number(in: line[space...])
                }
                continue
            }
            if let current { found.append(current) }
            current = header(line)
        }
        if let current { found.append(current) }
        return found
    }

    /// A header line's mapping, when it maps a file.
    private static func header(_ line: ArraySlice<UInt8>) -> Mapping? {
        let fields = line.split(separator: UInt8(ascii: " "), maxSplits: 5, omittingEmptySubsequences: true)
        // The path is padded to a column: the rest of the line after the inode, less its spaces.
        guard fields.count == 6, case let path = fields[5].drop(while: { $0 == UInt8(ascii: " ") }), path.first == UInt8(ascii: "/") else { return nil }
        let range = fields[0].split(separator: UInt8(ascii: "-"))
        guard range.count == 2, let start = Int(String(decoding: range[0], as: UTF8.self), radix: 16),
              let end = Int(String(decoding: range[1], as: UTF8.self), radix: 16), end > start else { return nil }
        return Mapping(start: start, end: end, writable: fields[1].contains(UInt8(ascii: "w")), copiedKB: 0,
                       path: String(decoding: path, as: UTF8.self))
    }

    /// The first decimal number in `bytes` (0 when none).
    private static func number(in bytes: ArraySlice<UInt8>) -> Int {
        var value = 0
        var seen = false
        for byte in bytes {
            if byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") {
                value = value &* 10 &+ Int(byte - UInt8(ascii: "0"))
                seen = true
            } else if seen {
                break
            }
        }
        return value
    }

    private static func read(_ path: String) -> [UInt8]? {
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
        return bytes
    }
}
