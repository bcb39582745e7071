#if Fleet
import Logging

/// The agent's log handler for postgres-nio's own messages, every one at debug: the client
/// logs each failed connection attempt at info ("Connection creation failed"), a line per
/// retry while the database is away, where the fleet's own lines already say so once.
struct DemotedLogHandler: LogHandler {
    var base: any LogHandler
    /// Where the pool's connection attempts are recorded (a store's own pool), if anywhere.
    var attempts: PoolAttempts?

    /// At most info where the attempts are recorded: the pool logs a failed attempt at info, and
    /// a logger drops what is below its handler's level before the handler sees it.
    var logLevel: Logger.Level {
        get { attempts == nil ? base.logLevel : min(base.logLevel, .info) }
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
        attempts?.record(event)
        guard base.logLevel <= .debug else { return }
        var event = event
        event.level = .debug
        base.log(event: event)
    }

    /// `logger` with its messages at debug (its level unchanged: they show when it is debug);
    /// the pool's connection attempts recorded in `attempts`.
    static func demoting(_ logger: Logger, recording attempts: PoolAttempts? = nil) -> Logger {
        let base = logger.handler
        return Logger(label: logger.label) { _ in DemotedLogHandler(base: base, attempts: attempts) }
    }
}
#endif
