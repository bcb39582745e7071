/// Where an agent got to in the fleet's events its monitors subscribe to (owned by the loop;
/// see ``Supervisor`` `+FleetEvents`).
struct FleetEventReader {
    /// The last event handed over to the monitors (nil until read from the database).
    var cursor: Int64?
    /// The cursor is being read from the database.
    var askingCursor = false
    /// A read is in flight; `readAgain`: a wakeup came meanwhile.
    var reading = false
    var readAgain = false
    /// LISTEN agent_events started.
    var listening = false
    /// Events received from the fleet since the start.
    var received = 0
    /// A cursor that every subscriber's worker had been handed (none waited in the agent's
    /// queues) at `candidateAt`: recorded in the database a second later, not at once, to give
    /// the monitors time to take what their workers were handed.
    var candidate: Int64?
    var candidateAt = 0.0
    /// The cursor last recorded in the database.
    var recorded: Int64 = 0
    /// Why the last read failed, while it does.
    var failing: String?
}
