import Foundation
import JSONSchema

/// How a store reads a list of runs (``RunStore/list(_:)``, ``WorkflowStore/list(_:)``), each
/// row a run's record for lists or its record: parsed into runs until the texts come to
/// ``RunListing/readLimit`` bytes (the first always), then ``full``: the rows after it are not
/// parsed.
package struct RunListReader<Run: Sendable> {
    /// Members no list shows, never named as left out.
    private let unshown: Set<String>
    private var runs: [ListedRun<Run>] = []
    private var bytes = 0
    /// The texts read came to the bound: more rows match than the page has.
    package private(set) var full = false

    package init(unshown: Set<String> = []) { self.unshown = unshown }

    /// Adds a row's run: `text` (a record for lists names what it left out; `omitted` names
    /// what a store left out of a record otherwise), decoded by `decode`. A text that is no
    /// JSON is passed over.
    package mutating func add(_ text: String, omitted: [String]? = nil, _ decode: (JSONValue) -> Run?) {
        guard !full else { return }
        bytes += text.utf8.count
        if bytes > RunListing.readLimit, !runs.isEmpty {
            full = true
            return
        }
        guard let value = try? JSONValue.parse(Data(text.utf8)) else { return }
        let (record, left) = RunListing.split(value)
        if let run = decode(record) { runs.append(ListedRun(run, omitted: (omitted ?? left).filter { !unshown.contains($0) })) }
    }

    /// The runs read, newest first as the rows came.
    package var page: RunListPage<Run> { RunListPage(runs, cut: full) }
}
