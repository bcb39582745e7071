/// Where an agent got to in the fleet's events its monitors subscribe to (owned by the loop;
/// see ``FleetEventRelay``).
package struct FleetEventReader {
    /// The last event handed over to the monitors (nil until read from the database).
    package var cursor: Int64?
    /// The cursor is being read from the database.
    package var askingCursor = false
    /// A read is in flight; `readAgain`: a wakeup came meanwhile.
    package var reading = false
    package var readAgain = false
    /// LISTEN agent_events started.
    package var listening = false
    /// Events received from the fleet since the start.
    package var received = 0
    /// Events skipped since the start: larger than this agent's `max_payload_bytes`.
    package var skipped = 0
    /// A cursor that every subscriber's worker had been handed (none waited in the agent's
    /// queues) at `candidateAt`: recorded in the database a second later, not at once, to give
    /// the monitors time to take what their workers were handed.
    package var candidate: Int64?
    package var candidateAt = 0.0
    /// The cursor last recorded in the database.
    package var recorded: Int64 = 0
    /// Why the last read failed, while it does.
    package var failing: String?

    package init() {}
}
