import Foundation

// Conversions that never trap. `Int(someDouble)` traps on NaN, on infinities and on anything
// out of range, and Foundation's `NSCondition.wait(until:)` traps on a date past 2262 (it
// converts to Int64 nanoseconds): one number from a settings file, a module or the network
// that slips past validation would otherwise take the whole supervisor down. Every Double
// that came from input goes through these on its way to an integer, a timer or a wait.

extension FixedWidthInteger {
    /// `value` rounded toward zero, or the nearest bound of this type when it is beyond it;
    /// NaN is 0. Unlike `Self(value)`, it never traps.
    @inlinable
    public init(saturating value: Double) {
        if value.isNaN {
            self = 0
        } else if value <= Double(Self.min) {
            self = Self.min
        } else if value >= Double(Self.max) {
            // Double(Self.max) rounds up to a power of two for 64-bit types, so anything
            // below it converts exactly.
            self = Self.max
        } else {
            self.init(value)
        }
    }
}

/// Spans of time given in seconds, made safe for timers and waits.
///
/// Every timer and wait in the runtime takes its span through here: NaN and negative spans
/// are 0, and spans longer than ``longest`` (infinity, `1e300`) are ``longest``, so that
/// converting them to milliseconds, nanoseconds, a `timespec` or a `Date` cannot overflow.
/// Settings are bounded far tighter by their schemas (a day for most timeouts); this is the
/// backstop for a value the schema missed.
public enum Saturating {
    /// The longest span honoured: 100 years. In nanoseconds (3.2e18) it fits an Int64, and
    /// now plus this is a date Foundation can still wait for.
    public static let longest: Double = 100 * 365.25 * 86_400

    /// `seconds` within `0...longest`; NaN is 0.
    @inlinable
    public static func seconds(_ seconds: Double) -> Double {
        seconds.isNaN ? 0 : Swift.min(Swift.max(seconds, 0), longest)
    }

    /// Whole milliseconds in `seconds` (clamped as ``seconds(_:)``), rounded up so that a
    /// wait never ends before its span.
    @inlinable
    public static func milliseconds(_ seconds: Double) -> Int {
        Int(saturating: (Self.seconds(seconds) * 1000).rounded(.up))
    }

    /// A `poll`/`epoll_wait` timeout for `seconds`, rounded up and at most `Int32.max`
    /// milliseconds (24.8 days); a caller that waits longer wakes early and waits again.
    @inlinable
    public static func pollTimeout(_ seconds: Double) -> Int32 {
        Int32(clamping: milliseconds(seconds))
    }

    /// Nanoseconds in `seconds` (clamped as ``seconds(_:)``), for `Task.sleep` and the like.
    @inlinable
    public static func nanoseconds(_ seconds: Double) -> UInt64 {
        UInt64(saturating: (Self.seconds(seconds) * 1e9).rounded(.up))
    }
}

extension Date {
    /// Now plus `seconds`, clamped as ``Saturating/seconds(_:)``: never in the past, never
    /// further than ``Saturating/longest`` ahead.
    public init(saturatingSecondsFromNow seconds: Double) {
        self.init(timeIntervalSinceNow: Saturating.seconds(seconds))
    }

    /// This date plus `seconds` (negative spans move back), clamped to at most
    /// ``Saturating/longest`` from now: a date any wait can be given.
    public func addingSaturated(_ seconds: Double) -> Date {
        let sum = timeIntervalSinceReferenceDate + (seconds.isNaN ? 0 : seconds)
        let latest = Date.timeIntervalSinceReferenceDate + Saturating.longest
        return Date(timeIntervalSinceReferenceDate: Swift.min(sum.isNaN ? latest : sum, latest))
    }
}

extension NSCondition {
    /// Waits until signalled or `seconds` pass (clamped as ``Saturating/seconds(_:)``), with
    /// the lock held as for `wait(until:)`; returns whether it was signalled.
    @discardableResult
    public func wait(seconds: Double) -> Bool {
        wait(until: Date(saturatingSecondsFromNow: seconds))
    }

    /// `wait(until:)` for any date: one further than ``Saturating/longest`` from now (e.g.
    /// `Date.distantFuture`, past what Foundation can convert) waits that long at most.
    @discardableResult
    public func wait(untilSaturated deadline: Date) -> Bool {
        wait(until: Date().addingSaturated(deadline.timeIntervalSinceNow))
    }
}

extension Double {
    /// Short text for a number of seconds, bytes or a count in a message: `3`, `0.25`,
    /// `1e+300`, `inf`. Never traps (unlike `String(Int(value))`).
    public var compactText: String {
        isFinite && rounded() == self && Swift.abs(self) < 1e15 ? String(Int(self)) : String(self)
    }
}


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
