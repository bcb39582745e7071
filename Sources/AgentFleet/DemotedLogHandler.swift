#if Fleet
import Logging

/// The agent's log handler for postgres-nio's own messages, every one at debug: the client
/// logs each failed connection attempt at info ("Connection creation failed"), a line per
/// retry while the database is away, where the fleet's own lines already say so once.
struct DemotedLogHandler: LogHandler {
    var base: any LogHandler

    var logLevel: Logger.Level {
        get { base.logLevel }
        set { base.logLevel = newValue }
    }

    var metadata: Logger.Metadata {
        get { base.metadata }
        set { base.metadata = newValue }
    }

    var metadataProvider: Logger.MetadataProvider? {
        get { base.metadataProvider }
        set { base.metadataProvider = newValue }
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { base[metadataKey: key] }
        set { base[metadataKey: key] = newValue }
    }

    func log(event: LogEvent) {
        guard base.logLevel <= .debug else { return }
        var event = event
        event.level = .debug
        base.log(event: event)
    }

    /// `logger` with its messages at debug (its level unchanged: they show when it is debug).
    static func demoting(_ logger: Logger) -> Logger {
        let base = logger.handler
        return Logger(label: logger.label) { _ in DemotedLogHandler(base: base) }
    }
}
#endif
