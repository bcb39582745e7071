#if Fleet
import Logging
import Synchronization

/// What the connection pool's own attempts to connect met, read from its log: postgres-nio
/// reports a failed attempt only there ("Connection creation failed", with the error's debug
/// description), and a lease that waits past its deadline says nothing of why.
///
/// Why a store needs it: a store whose every attempt was refused for too many clients, and
/// that gives up at its deadline, probes the server once more to say why; by then a connection
/// may be free (another store gave up, a backend ended), the probe succeeds, and all the store
/// could say was "no answer within N s" — seen at load 50 with 24 stores on a server of 10
/// connections (FleetConnectionLimitTests). The pool's last refusal is the cause.
final class PoolAttempts: Sendable {
    private let lastFailure = Mutex<String?>(nil)

    /// Takes the pool's log events: keeps the error of each failed attempt, forgets it when one
    /// succeeds.
    func record(_ event: LogEvent) {
        switch "\(event.message)" {
        case "Connection creation failed":
            // The error is in the metadata ("psql_error": its debug description, which names the
            // SQLSTATE), or the event's own error.
            let error = (event.metadata ?? [:]).values.map { "\($0)" }.joined(separator: " ") + (event.error.map { " " + String(reflecting: $0) } ?? "")
            lastFailure.withLock { $0 = error }
        case "Connection established":
            lastFailure.withLock { $0 = nil }
        default:
            break
        }
    }

    /// The pool's last attempt failed because the server had no connection left
    /// (SQLSTATE 53300, too_many_connections).
    var lastAttemptWasRefusedForTooManyClients: Bool {
        lastFailure.withLock { $0?.contains("sqlState: 53300") ?? false }
    }
}
#endif
