import Synchronization

/// A flag claimed once, by whichever of several threads comes first: to run a callback that
/// either of two events may end (a write committed, or its deadline).
package final class OnceFlag: Sendable {
    private let claimed = Atomic<Bool>(false)

    package init() {}

    /// True for the first caller only.
    package func claim() -> Bool {
        claimed.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged
    }
}
