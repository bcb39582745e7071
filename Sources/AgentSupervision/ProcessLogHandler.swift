import Logging

/// A log handler that writes through to another and also keeps the lines about a process
/// (those with `process` metadata) in that process's ``ProcessLog``. Lines of a worker's own
/// output carry `stream` metadata and are kept by the output capture itself, with their
/// stream.
package struct ProcessLogHandler: LogHandler {
    package var base: any LogHandler
    package let log: ProcessLog

    package init(base: any LogHandler, log: ProcessLog) {
        self.base = base
        self.log = log
    }

    package var logLevel: Logger.Level {
        get { base.logLevel }
        set { base.logLevel = newValue }
    }

    package var metadata: Logger.Metadata {
        get { base.metadata }
        set { base.metadata = newValue }
    }

    package subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { base[metadataKey: key] }
        set { base[metadataKey: key] = newValue }
    }

    package func log(event: LogEvent) {
        base.log(event: event)
        guard var extra = event.metadata, extra["stream"] == nil, let process = extra.removeValue(forKey: "process") else { return }
        let rest = extra.isEmpty ? "" : " " + extra.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        log.append("\(process)", .supervisor, "\(event.level.rawValue): \(event.message)\(rest)")
    }

    /// `logger` with its lines about processes also kept in `log`.
    package static func teeing(_ logger: Logger, into log: ProcessLog) -> Logger {
        var teed = logger
        teed.handler = ProcessLogHandler(base: logger.handler, log: log)
        return teed
    }
}
