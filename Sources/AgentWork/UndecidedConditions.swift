import JSONSchema
import Logging

/// Conditions that could not be decided on an event (see ``ConditionOutcome/undecided(_:)``):
/// the event starts nothing and releases nothing, and that is said in the log — the first time
/// for each condition and then at every power of ten, with the count, so that a stream of
/// such events costs a few lines rather than one each.
package final class UndecidedConditions {
    private let logger: Logger
    private var counts: [String: Int] = [:]

    package init(logger: Logger) { self.logger = logger }

    /// How many events `owner`'s condition could not decide.
    package func count(of owner: String) -> Int { counts[owner] ?? 0 }

    /// One more event that `owner`'s condition (e.g. `the "where" of task nightly's on_event`)
    /// could not decide.
    package func report(_ owner: String, eventType: String, source: String, _ error: ValidationError) {
        let count = (counts[owner] ?? 0) + 1
        counts[owner] = count
        guard count == 1 || Self.isPowerOfTen(count) else { return }
        let times = count == 1 ? "" : " (\(count) events so far)"
        logger.warning("\(owner) could not be checked against an event \(eventType) from \(source)\(times), so it starts or releases nothing: \(error.message)")
    }

    private static func isPowerOfTen(_ value: Int) -> Bool {
        var value = value
        while value >= 10, value % 10 == 0 { value /= 10 }
        return value == 1
    }
}
