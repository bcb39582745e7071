import Synchronization

/// A flag claimed once, by whichever of several threads comes first: to resume a continuation
/// that either of two callbacks may end (an answer or its deadline).
final class OnceFlag: Sendable {
    private let claimed = Atomic<Bool>(false)

    /// True for the first caller only.
    func claim() -> Bool {
        claimed.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged
    }
}
