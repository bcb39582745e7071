/// The runs a store's list read (``RunStore/list(_:)``, ``WorkflowStore/list(_:)``), newest
/// first, and whether it stopped at ``RunListing/readLimit`` before the filter's limit.
package struct RunListPage<Run: Sendable>: RandomAccessCollection, ExpressibleByArrayLiteral, Sendable {
    package var runs: [ListedRun<Run>]
    /// The store stopped reading at its byte bound: more runs match than these.
    package var cut: Bool

    package init(_ runs: [ListedRun<Run>], cut: Bool = false) {
        self.runs = runs
        self.cut = cut
    }

    package init(arrayLiteral runs: ListedRun<Run>...) { self.init(runs) }

    package var startIndex: Int { runs.startIndex }
    package var endIndex: Int { runs.endIndex }
    package subscript(position: Int) -> ListedRun<Run> { runs[position] }
}
