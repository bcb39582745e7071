import AgentCore
import Foundation
import JSONSchema

/// Prints events and messages for a person (readable lines) or a program (JSON lines), to
/// stdout, buffered and flushed once per loop turn. Readable lines carry the time as log lines
/// do (one format on one screen) and, on a terminal, alerts in colour (``TerminalStyle``).
/// With ``writeThroughThread(limit:)`` a flush hands the lines to a thread of their own, so
/// that a reader that stops reading never holds the loop.
public final class ConsoleOutput {
    public let json: Bool
    public let showEvents: Bool
    private let fd: Int32
    private let style: TerminalStyle
    private var buffer: [UInt8] = []
    private var bufferedLines = 0
    private var writer: DescriptorLineWriter?
    private let isTerminal: Bool
    /// A detached agent's log file: lines go through it (and its rotation) instead of `fd`.
    public var logFile: AgentLogFile?
    /// `fd` is systemd's journal stream (``JournalStream``): readable lines get a `<N>`
    /// priority (an alert its level's) and no timestamp; JSON lines stay as they are.
    private let journal: Bool

    /// The reader of a pipe on `fd` went away (a write failed with EPIPE): what follows is
    /// dropped, and the agent stops, as `yes | head` does (see ``pipeDescriptor``).
    public private(set) var readerGone = false

    public init(json: Bool, showEvents: Bool, fd: Int32 = 1) {
        self.json = json
        self.showEvents = showEvents
        self.fd = fd
        journal = !json && JournalStream.isJournal(fd: fd)
        // Now: a terminal that is closed later is no terminal to isatty.
        isTerminal = isatty(fd) == 1
        style = json || journal ? .plain : TerminalStyle.forDescriptor(fd)
    }

    /// `fd` when it is a pipe or a terminal that lines go to: the outputs whose end ends the
    /// console — a pipe's reader exits (`console --json | head`), a terminal is closed (its
    /// window, an ssh session; its SIGHUP alone would be taken for a reload, and the agent
    /// would run on with nobody to see it). A file or systemd's journal socket never does.
    public var pipeDescriptor: Int32? {
        guard logFile == nil else { return nil }
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFIFO || isTerminal else { return nil }
        return fd
    }

    /// What ended the output, for the log: `its reader exited`, `its terminal was closed`.
    public var endedHow: String { isTerminal ? "its terminal was closed" : "its reader exited" }

    /// Whether `fd` is a terminal that was closed (hung up). Its SIGHUP, which may come before
    /// the loop sees the hang-up (``pipeDescriptor``'s watch), then ends the console rather
    /// than starting a reload.
    public var terminalClosed: Bool {
        guard logFile == nil, isTerminal else { return false }
        var hangup = pollfd(fd: fd, events: 0, revents: 0)
        return poll(&hangup, 1, 0) == 1 && hangup.revents & Int16(POLLHUP) != 0
    }

    /// Notes that the pipe's reader is gone (its hang-up was seen before a write failed).
    public func pipeClosed() {
        readerGone = true
        buffer.removeAll(keepingCapacity: true)
        bufferedLines = 0
    }

    /// From now on lines go to `fd` through a thread of their own (``DescriptorLineWriter``):
    /// a reader that stops reading (a paused pager, a terminal held by Ctrl-S, a `--json`
    /// consumer that stalls) never holds the caller. Up to `limit` bytes wait for it; lines
    /// beyond are dropped, and a line in the output's own format says how many, where they were.
    /// A pipe whose reader exits is still seen by its hang-up (``pipeClosed()``). Not for a
    /// log file, whose writes never wait for a reader. `sharing`: the log's writer, to take
    /// instead of a thread of its own when `fd` is the log's file too (a terminal, one pipe for
    /// `2>&1`, systemd's journal stream): two threads writing one pipe could each cut the
    /// other's lines, and one keeps their order. Returns the writer, for its owner to
    /// ``DescriptorLineWriter/finish(until:)`` after the last ``flush()``.
    @discardableResult
    public func writeThroughThread(limit: Int = DescriptorLineWriter.defaultLimit, sharing: DescriptorLineWriter? = nil) -> DescriptorLineWriter? {
        guard writer == nil, logFile == nil else { return writer }
        if let sharing {
            writer = sharing
            return writer
        }
        let json = json, journal = journal
        writer = DescriptorLineWriter(fd: fd, limit: limit, threadName: "agent-console") { dropped in
            Array("\(Self.droppedLine(dropped, json: json, journal: journal))\n".utf8)
        }
        return writer
    }

    /// Whether descriptors `a` and `b` are one file (one terminal, pipe or socket).
    public static func sameFile(_ a: Int32, _ b: Int32) -> Bool {
        var first = stat(), second = stat()
        guard fstat(a, &first) == 0, fstat(b, &second) == 0 else { return false }
        return first.st_dev == second.st_dev && first.st_ino == second.st_ino
    }

    /// The line that stands where `dropped` lines were dropped, in the output's format.
    static func droppedLine(_ dropped: Int, json: Bool, journal: Bool) -> String {
        let text = DescriptorLineWriter.noticeText(dropped)
        if json { return JSONValue.object(["kind": .string("dropped"), "lines": .number(JSONNumber(dropped)), "text": .string(text)]).serialized() }
        return journal ? JournalStream.prefixed(text, priority: 4) : text
    }

    /// `2026-01-31T12:00:00.123Z` (UTC, milliseconds): the time of log lines, event and message
    /// lines, `logs`, `events` and `history`; `full: false` keeps only the clock.
    public static func timestamp(nanoseconds: Int64, full: Bool) -> String {
        // Floored, so that a time before 1970 is still a valid instant.
        var (seconds, rest) = nanoseconds.quotientAndRemainder(dividingBy: 1_000_000_000)
        if rest < 0 {
            seconds -= 1
            rest += 1_000_000_000
        }
        return timestamp(seconds: seconds, millis: Int(rest) / 1_000_000, full: full)
    }

    /// The same of a time in seconds since 1970 as the stores keep it (a double): rounded to
    /// the millisecond from the seconds. In nanoseconds, 1,795,496,743.25 s lost its last
    /// digits to the double's precision and was shown as .249, and nanoseconds in 64 bits
    /// reach from 1677 to 2262 only (a schedule's "at" of 9999-12-31 was shown as 2262-04-11).
    public static func timestamp(seconds: Double, full: Bool) -> String {
        var (whole, millis) = Int64(saturating: (seconds * 1000).rounded()).quotientAndRemainder(dividingBy: 1000)
        if millis < 0 {
            whole -= 1
            millis += 1000
        }
        return timestamp(seconds: whole, millis: Int(millis), full: full)
    }

    /// The same of a time in whole seconds since 1970 and milliseconds: any year from 1 to
    /// 9999, where nanoseconds in 64 bits reach from 1677 to 2262 only.
    public static func timestamp(seconds: Int64, millis: Int, full: Bool) -> String {
        var parts = tm()
        var copy = time_t(seconds)
        gmtime_r(&copy, &parts)
        // Digits written by hand: String(format:) cost ~1.5 µs a call on the routing path.
        var bytes: [UInt8] = []
        bytes.reserveCapacity(24)
        func digits(_ value: Int, _ width: Int) {
            var divisor = 1
            for _ in 1..<width { divisor *= 10 }
            var rest = max(value, 0)
            if width == 4, rest > 9999 { rest = 9999 }
            while divisor > 0 {
                bytes.append(UInt8(48 + (rest / divisor) % 10))
                divisor /= 10
            }
        }
        if full {
            digits(Int(parts.tm_year) + 1900, 4); bytes.append(UInt8(ascii: "-"))
            digits(Int(parts.tm_mon) + 1, 2); bytes.append(UInt8(ascii: "-"))
            digits(Int(parts.tm_mday), 2); bytes.append(UInt8(ascii: "T"))
        }
        digits(Int(parts.tm_hour), 2); bytes.append(UInt8(ascii: ":"))
        digits(Int(parts.tm_min), 2); bytes.append(UInt8(ascii: ":"))
        digits(Int(parts.tm_sec), 2); bytes.append(UInt8(ascii: "."))
        digits(millis, 3)
        if full { bytes.append(UInt8(ascii: "Z")) }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// An event routed by the supervisor.
    package func event(source: String, type: UnsafeRawBufferPointer, timeNanoseconds: Int64, payload: UnsafeRawBufferPointer) {
        guard showEvents else { return }
        let typeText = String(decoding: type, as: UTF8.self)
        if json {
            let payloadValue = (try? JSONValue.parse(payload)) ?? .string(String(decoding: payload, as: UTF8.self))
            let line = JSONValue.object([
                "kind": .string("event"), "time": .string(Self.timestamp(nanoseconds: timeNanoseconds, full: true)),
                "source": .string(source), "type": .string(typeText), "payload": payloadValue,
            ])
            append(line.serialized())
        } else {
            // A module's text: shown, not obeyed (JSON leaves C1 and bidirectional controls raw).
            let shown = TerminalText.shown("\(source) → \(typeText)  \(String(decoding: payload, as: UTF8.self))", keepingLines: false)
            if journal { return append(JournalStream.prefixed(shown, priority: 6)) }
            let time = style.paint(Self.timestamp(nanoseconds: timeNanoseconds, full: true), .dim)
            append("\(time)  \(shown)")
        }
    }

    /// A message sent by a process (alerts are messages at warning level or above).
    package func message(source: String, level: Int, text: String, timeNanoseconds: Int64) {
        let levelName = Self.levelName(level)
        if json {
            let line = JSONValue.object([
                "kind": .string("message"), "time": .string(Self.timestamp(nanoseconds: timeNanoseconds, full: true)),
                "source": .string(source), "level": .string(levelName), "text": .string(text),
            ])
            append(line.serialized())
        } else {
            let marker = "\(level >= 2 ? "ALERT" : "message")[\(levelName)]:"
            // A module's text, one line: shown, not obeyed; a line break would forge a line.
            let text = TerminalText.shown(text, keepingLines: false)
            let source = TerminalText.shown(source, keepingLines: false)
            if journal {
                // debug, info, warning, error, critical: 7, 6, 4, 3, 2.
                append(JournalStream.prefixed("\(source) \(marker) \(text)", priority: (0...3).contains(level) ? [7, 6, 4, 3][level] : 2))
                return
            }
            let time = style.paint(Self.timestamp(nanoseconds: timeNanoseconds, full: true), .dim)
            append("\(time)  \(source) \(style.messageColor(level: level).map { style.paint(marker, $0) } ?? marker) \(text)")
        }
    }

    package static func levelName(_ level: Int) -> String {
        switch level {
        case 0: "debug"
        case 1: "info"
        case 2: "warning"
        case 3: "error"
        default: "critical"
        }
    }

    private func append(_ line: String) {
        buffer.append(contentsOf: line.utf8)
        buffer.append(10)
        bufferedLines += 1
        if buffer.count > 64 << 10 { flush() }
    }

    /// Writes what is buffered (or hands it to the writer's thread).
    public func flush() {
        guard !buffer.isEmpty else { return }
        let lines = bufferedLines
        bufferedLines = 0
        if let logFile {
            buffer.withUnsafeBytes { logFile.write($0) }
            buffer.removeAll(keepingCapacity: true)
            return
        }
        guard !readerGone else {
            buffer.removeAll(keepingCapacity: true)
            return
        }
        if let writer {
            buffer.withUnsafeBytes { writer.write($0, lines: lines) }
            buffer.removeAll(keepingCapacity: true)
            return
        }
        let failure: Int32? = buffer.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                let n = write(fd, raw.baseAddress! + offset, raw.count - offset)
                if n < 0 {
                    if errno == EINTR { continue }
                    return errno
                }
                offset += n
            }
            return nil
        }
        buffer.removeAll(keepingCapacity: true)
        if failure == EPIPE, pipeDescriptor != nil { readerGone = true }
    }
}
