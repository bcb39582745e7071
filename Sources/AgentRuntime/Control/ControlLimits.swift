import Foundation

/// What one client of the control socket may hold of the supervisor: without these bounds a
/// flood of idle connections takes every file descriptor (and with them every restart), and a
/// client that does not read its answer stalls the loop.
public struct ControlLimits: Sendable, Equatable {
    /// Connections open at once; more are answered with an error and closed at once.
    public var maximumConnections = 64
    /// Seconds a connection may take to send its whole request (from its start: a client that
    /// trickles bytes gains nothing), or to take a part of its answer, before it is closed. A
    /// request that waits for its answer (a chat) is not idle.
    public var idleTimeout = 10.0
    /// Bytes of one answer kept for a client that reads slowly; a longer answer is replaced by
    /// an error saying so.
    public var maximumAnswerBytes = 16 << 20

    public init() {}

    /// The shortest ``idleTimeout``: the sweep runs every half of it, and a client needs time
    /// to send its request.
    public static let shortestIdleTimeout = 0.5

    /// The defaults, with `AGENT_CONTROL_MAX_CONNECTIONS` and `AGENT_CONTROL_IDLE_TIMEOUT`
    /// (seconds, at least ``shortestIdleTimeout``) from `environment` where they hold a
    /// positive number.
    public init(environment: [String: String]) {
        if let value = environment["AGENT_CONTROL_MAX_CONNECTIONS"].flatMap(Int.init), value > 0 {
            maximumConnections = min(value, 1 << 16)
        }
        if let value = environment["AGENT_CONTROL_IDLE_TIMEOUT"].flatMap(Double.init), value > 0, value.isFinite {
            idleTimeout = min(max(value, Self.shortestIdleTimeout), 86_400)
        }
    }
}
