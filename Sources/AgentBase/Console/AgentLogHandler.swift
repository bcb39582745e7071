import AgentCore
import Foundation
import Logging

/// Writes log lines as `time level [process] message` to a file descriptor (stderr), or to the
/// agent's log file (``AgentLogFile``, rotated); as `<N>[process] message` when the descriptor
/// is systemd's journal stream (``JournalStream``). The time as on event lines
/// (``ConsoleOutput/timestamp(nanoseconds:full:)``, full), the level in colour on a terminal
/// (``TerminalStyle``). With a ``DescriptorLineWriter``, lines go through its thread instead of
/// being written where they are logged (the supervisor's: its loop never waits for stderr).
public struct AgentLogHandler: LogHandler {
    public var logLevel: Logger.Level
    public var metadata: Logger.Metadata = [:]
    private let fd: Int32
    private let label: String
    private let file: AgentLogFile?
    private let journal: Bool
    private let style: TerminalStyle
    private let writer: DescriptorLineWriter?

    public init(label: String, fd: Int32 = 2, level: Logger.Level = .info, file: AgentLogFile? = nil, writer: DescriptorLineWriter? = nil) {
        self.label = label
        self.fd = fd
        self.logLevel = level
        self.file = file
        self.writer = file == nil ? writer : nil
        journal = file == nil && JournalStream.isJournal(fd: fd)
        style = file == nil ? TerminalStyle.forDescriptor(fd) : .plain
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var all = metadata
        if let extra = event.metadata { all.merge(extra) { _, new in new } }
        let tag = all.removeValue(forKey: "process")
        let process = tag.map { "[\($0)] " } ?? ""
        // A process's line is a module's text (its output, its `log` calls): an escape
        // sequence in it recoloured or cleared the terminal of whoever read the log, a line
        // break forged a line of the supervisor's own.
        let message = tag == nil ? event.message.description : TerminalText.shownOnOneLine(event.message.description)
        let rest = all.isEmpty ? "" : " " + all.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        if journal {
            // The journal stamps the time and reads the priority.
            emit(JournalStream.prefixed("\(process)\(message)\(rest)", priority: JournalStream.priority(event.level)) + "\n")
            return
        }
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        let time = ConsoleOutput.timestamp(nanoseconds: Int64(ts.tv_sec) * 1_000_000_000 + Int64(ts.tv_nsec), full: true)
        let line = "\(style.paint(time, .dim)) \(style.level(event.level)) \(process)\(message)\(rest)\n"
        emit(line)
    }

    private func emit(_ line: String) {
        let bytes = Array(line.utf8)
        if let file {
            bytes.withUnsafeBytes { file.write($0) }
            return
        }
        if let writer {
            bytes.withUnsafeBytes { writer.write($0) }
            return
        }
        _ = bytes.withUnsafeBytes { DescriptorWrite.all(fd, $0) }
    }
}
