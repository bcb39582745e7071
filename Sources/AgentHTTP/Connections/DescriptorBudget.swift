import Foundation

/// Whether the descriptors the agent may open hold `http.max_connections`. Past the limit,
/// accepting fails with EMFILE and NIO's accept loop tries again at once (thousands of
/// `accept4` a second) while new clients wait unanswered: said once at start instead.
enum DescriptorBudget {
    /// Descriptors kept for the rest of the agent: the store, its log, the control socket,
    /// the fork server, a few workers (each takes four more).
    static let reserved = 64

    /// The warning for `maximumConnections` (and `health` probe connections) under a limit of
    /// `limit` descriptors; nil when they fit.
    static func warning(maximumConnections: Int, health: Int, limit: UInt64) -> String? {
        let needed = UInt64(maximumConnections + health + reserved)
        guard needed > limit else { return nil }
        return """
            http: max_connections (\(maximumConnections)) does not fit the \(limit) descriptors the agent may open \
            (ulimit -n): with the agent's own \(reserved) it needs at least \(needed), and each worker takes four more; past the limit new \
            connections wait unanswered. Raise the limit (LimitNOFILE= in the service unit, ulimit -n) or lower \
            http.max_connections (/http/max_connections)
            """
    }

    /// The warning for this process's soft limit (which the supervisor has raised to the hard
    /// one), nil when the connections fit or the limit cannot be read.
    static func warning(maximumConnections: Int, health: Int) -> String? {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return nil }
        return warning(maximumConnections: maximumConnections, health: health, limit: UInt64(limit.rlim_cur))
    }
}
