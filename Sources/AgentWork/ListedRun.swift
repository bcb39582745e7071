/// A run as a store's list reads it: possibly without its long members (see ``RunListing``),
/// which `omitted` names; ``RunListing/shown(_:omitted:)`` makes the list's answer of it.
package struct ListedRun<Run: Sendable>: Sendable {
    package var run: Run
    /// Members the store left out of `run` (their defaults stand in for them).
    package var omitted: [String]

    package init(_ run: Run, omitted: [String] = []) {
        self.run = run
        self.omitted = omitted
    }
}
