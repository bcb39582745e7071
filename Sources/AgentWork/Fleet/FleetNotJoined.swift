import AgentBase

/// The refusal of a request that needs the fleet before this agent has joined it (its
/// database has not answered since the start): HTTP 503 with `Retry-After`, at once, rather
/// than a request left waiting for a database that may not come.
package enum FleetNotJoined {
    /// Seconds after which to ask again (the agent tries to join at most every 30 s).
    package static let retryAfter = 5

    /// `outcome`: what did not happen ("the run of task \"x\" was not queued").
    package static func error(_ outcome: String) -> CommandError {
        .unavailable("this agent has not joined its fleet yet (its database has not answered since the start: see `agent-control status`, fleet.degraded), so \(outcome); try again once it has joined",
                     retryAfter: retryAfter)
    }
}
