import AgentBase
import AgentCore
import Foundation
import JSONSchema
import Synchronization

/// The recent log of each process, kept in memory by the supervisor: the lines its workers
/// wrote on stdout and stderr, and the supervisor's own log lines about it (those logged with
/// `process` metadata). `agent-control logs` and the API read it.
///
/// Bounded per process: the last ``Limits/lines`` lines or ``Limits/bytes`` bytes of text,
/// whichever is reached first; a line longer than ``Limits/lineBytes`` is cut, saying so.
/// Lines carry a sequence number that grows for the whole run of the agent, so that a reader
/// asks for what came after the last line it saw. The lines of a worker that died stay (its
/// successor appends to them); a process removed by a reload loses its log.
///
/// Thread-safe (a mutex): the supervisor's loop writes most lines, but a logger call from
/// another thread (the query runner's) about a process lands here too.
public final class ProcessLog: Sendable {
    /// Where a line came from.
    public enum Stream: String, Sendable {
        case stdout, stderr, supervisor
    }

    /// One line of a process's log.
    public struct Line: Sendable, Equatable {
        /// Grows by one for every line of every process during one run of the agent.
        public var seq: Int
        /// Wall-clock time, nanoseconds since 1970.
        public var time: Int64
        public var stream: Stream
        public var text: String

        /// `{"seq", "time", "stream", "text"}`, the time in ISO 8601 (UTC, milliseconds).
        public var json: JSONValue {
            ["seq": .number(JSONNumber(seq)), "time": .string(ConsoleOutput.timestamp(nanoseconds: time, full: true)),
             "stream": .string(stream.rawValue), "text": .string(text)]
        }
    }

    /// How much is kept.
    public struct Limits: Sendable {
        /// Lines kept per process.
        public var lines: Int
        /// Bytes of text kept per process.
        public var bytes: Int
        /// Longer lines are cut to this many bytes (and say so).
        public var lineBytes: Int

        public init(lines: Int = 2000, bytes: Int = 512 << 10, lineBytes: Int = 16 << 10) {
            self.lines = max(1, lines)
            self.bytes = max(1, bytes)
            self.lineBytes = max(64, lineBytes)
        }
    }

    /// A page of lines (see ``read(_:after:since:limit:)``).
    public struct Page: Sendable {
        public var lines: [Line]
        /// What to pass as `after` to get the lines that come after these.
        public var next: Int
    }

    /// One process's lines, oldest first: `lines[head...]` (slots before `head` were evicted
    /// and are reclaimed in bulk, so that each line is moved at most once on average).
    package struct Buffer {
        package var lines: [Line] = []
        package var head = 0
        package var bytes = 0

        package var count: Int { lines.count - head }
        package var live: ArraySlice<Line> { lines[head...] }

        package mutating func append(_ line: Line, limits: Limits) {
            let size = line.text.utf8.count
            while count > 0, count >= limits.lines || bytes + size > limits.bytes {
                bytes -= lines[head].text.utf8.count
                // The slot keeps no text alive until the next compaction.
                lines[head].text = ""
                head += 1
            }
            if head >= 256, head >= count {
                lines.removeFirst(head)
                head = 0
            }
            lines.append(line)
            bytes += size
        }
    }

    private struct State {
        var lastSeq = 0
        var buffers: [String: Buffer] = [:]
    }

    public let limits: Limits
    private let state = Mutex(State())

    public init(limits: Limits = Limits()) {
        self.limits = limits
    }

    /// Keeps a log for exactly these processes: new names get an empty one, the logs of names
    /// not listed are dropped.
    public func keep(_ names: some Sequence<String>) {
        let wanted = Set(names)
        state.withLock { state in
            state.buffers = state.buffers.filter { wanted.contains($0.key) }
            for name in wanted where state.buffers[name] == nil { state.buffers[name] = Buffer() }
        }
    }

    /// Whether `name` has a log.
    public func has(_ name: String) -> Bool {
        state.withLock { $0.buffers[name] != nil }
    }

    /// Appends a line to `name`'s log (nothing when it has none: a process removed by a reload
    /// whose old worker still talks). A text longer than the limit is cut at a character
    /// boundary and says how long the line was (`length`: its length in bytes when `text` is
    /// already a part of it).
    public func append(_ name: String, _ stream: Stream, _ text: String, length: Int? = nil, time: Int64 = ProcessLog.now()) {
        let kept = cut(text, length: length)
        state.withLock { state in
            guard state.buffers[name] != nil else { return }
            state.lastSeq += 1
            state.buffers[name]!.append(Line(seq: state.lastSeq, time: time, stream: stream, text: kept), limits: limits)
        }
    }

    /// The lines of `name` with a sequence number above `after` and a time at or after `since`
    /// (nanoseconds since 1970), at most `limit` of them: with `after`, the oldest (so that a
    /// reader pages forward without a gap); without, the newest. Nil when `name` has no log.
    public func read(_ name: String, after: Int? = nil, since: Int64? = nil, limit: Int? = nil) -> Page? {
        state.withLock { state in
            guard let buffer = state.buffers[name] else { return nil }
            let matching = buffer.live.filter { line in
                (after.map { line.seq > $0 } ?? true) && (since.map { line.time >= $0 } ?? true)
            }
            let limit = max(0, limit ?? matching.count)
            if after != nil, matching.count > limit {
                let page = Array(matching.prefix(limit))
                return Page(lines: page, next: page.last?.seq ?? after!)
            }
            // Everything up to now was looked at: the next line of any process comes after.
            return Page(lines: Array(matching.suffix(limit)), next: state.lastSeq)
        }
    }

    /// The lines of several processes (a process's replicas) in sequence order, each with its
    /// process's name, selected as ``read(_:after:since:limit:)`` selects one's. Nil when none
    /// of them has a log.
    public func read(_ names: [String], after: Int? = nil, since: Int64? = nil, limit: Int? = nil) -> (lines: [(name: String, line: Line)], next: Int)? {
        state.withLock { state in
            var matching: [(name: String, line: Line)] = []
            var found = false
            for name in names {
                guard let buffer = state.buffers[name] else { continue }
                found = true
                for line in buffer.live where (after.map { line.seq > $0 } ?? true) && (since.map { line.time >= $0 } ?? true) {
                    matching.append((name, line))
                }
            }
            guard found else { return nil }
            matching.sort { $0.line.seq < $1.line.seq }
            let limit = max(0, limit ?? matching.count)
            if after != nil, matching.count > limit {
                let page = Array(matching.prefix(limit))
                return (page, page.last?.line.seq ?? after!)
            }
            return (Array(matching.suffix(limit)), state.lastSeq)
        }
    }

    /// The text as kept: at most `limits.lineBytes` bytes, cut at a character boundary, with a
    /// note of the full length.
    package func cut(_ text: String, length: Int? = nil) -> String {
        let utf8 = text.utf8
        let length = max(length ?? 0, utf8.count)
        guard length > limits.lineBytes else { return text }
        var end = utf8.index(utf8.startIndex, offsetBy: min(limits.lineBytes, utf8.count))
        // Back to the start of a character (UTF-8 continuation bytes are 0b10xxxxxx).
        while end > utf8.startIndex, end < utf8.endIndex, utf8[end] & 0xC0 == 0x80 { end = utf8.index(before: end) }
        return String(decoding: utf8[..<end], as: UTF8.self) + " … [line cut: \(length) bytes, the first \(limits.lineBytes) kept]"
    }

    /// Wall-clock time in nanoseconds since 1970.
    public static func now() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Int64(ts.tv_sec) * 1_000_000_000 + Int64(ts.tv_nsec)
    }
}
