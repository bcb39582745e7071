import JSONSchema
import Logging

/// Conditions that could not be decided on an event (see ``ConditionOutcome/undecided(_:)``):
/// the event starts nothing and releases nothing, and that is said in the log — the first time
/// for each condition and then at every power of ten, with the count, so that a stream of
/// such events costs a few lines rather than one each.
package final class UndecidedConditions {
    private let logger: Logger
    private var counts = LogCounts()

    package init(logger: Logger) { self.logger = logger }

    /// How many events `owner`'s condition could not decide.
    package func count(of owner: String) -> Int { counts.count(of: owner) }

    /// One more event that `owner`'s condition (e.g. `the "where" of task nightly's on_event`)
    /// could not decide.
    package func report(_ owner: String, eventType: String, source: String, _ error: ValidationError) {
        guard let count = counts.add(owner) else { return }
        let times = count == 1 ? "" : " (\(count) events so far)"
        logger.warning("\(owner) could not be checked against an event \(eventType) from \(source)\(times), so it starts or releases nothing: \(error.message)")
    }
}
