import AgentCore
import Foundation
import Logging

/// Writes log lines as `time level [process] message` to a file descriptor (stderr, or the
/// agent's log file).
public struct AgentLogHandler: LogHandler {
    public var logLevel: Logger.Level
    public var metadata: Logger.Metadata = [:]
    private let fd: Int32
    private let label: String

    public init(label: String, fd: Int32 = 2, level: Logger.Level = .info) {
        self.label = label
        self.fd = fd
        self.logLevel = level
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var all = metadata
        if let extra = event.metadata { all.merge(extra) { _, new in new } }
        let process = all.removeValue(forKey: "process").map { "[\($0)] " } ?? ""
        let rest = all.isEmpty ? "" : " " + all.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        let time = ConsoleOutput.timestamp(nanoseconds: Int64(ts.tv_sec) * 1_000_000_000 + Int64(ts.tv_nsec), full: true)
        let line = "\(time) \(event.level.rawValue.padding(toLength: 7, withPad: " ", startingAt: 0)) \(process)\(event.message)\(rest)\n"
        var bytes = Array(line.utf8)
        bytes.withUnsafeMutableBytes { raw in
            var offset = 0
            while offset < raw.count {
                let n = write(fd, raw.baseAddress! + offset, raw.count - offset)
                if n < 0 { if errno == EINTR { continue }; break }
                offset += n
            }
        }
    }
}
