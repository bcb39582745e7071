/// The queued runs of one task, best first: the earliest *aged due time* — the run's due time
/// (its not-before time or next attempt, else its arrival) less its priority's rank × the
/// aging interval —, then the earlier arrival. So a higher priority goes first among runs
/// queued close together, and a run waiting long enough rises above later ones of any
/// priority: a run is never overtaken by a run queued more than (that run's rank − its rank)
/// × the aging interval after it (a `low` run by `critical` ones at most 3 intervals later,
/// by `high` ones at most 2) — no starvation. The key does not depend on the time of the
/// comparison, so that the order is a plain heap's. A binary heap: O(log n) to add and to
/// take the best. Cancelled runs are not taken out; the coordinator skips them when they come
/// up (``TaskCoordinator``).
package struct RunQueue {
    /// Seconds of waiting worth one priority step, unless the settings say otherwise
    /// (`"assignment": {"aging_interval": …}`).
    package static let defaultAgingInterval = AssignmentSettings.defaultAgingInterval

    package struct Entry {
        package var id: String
        package var rank: Int
        package var due: Double
        package var sequence: Int
        /// `due − rank × aging interval`: lower goes first.
        package var key: Double

        package init(id: String, rank: Int, due: Double, sequence: Int, agingInterval: Double = RunQueue.defaultAgingInterval) {
            self.id = id
            self.rank = rank
            self.due = due
            self.sequence = sequence
            key = due - Double(rank) * agingInterval
        }

        /// Whether `self` goes before `other`.
        package func precedes(_ other: Entry) -> Bool {
            if key != other.key { return key < other.key }
            if rank != other.rank { return rank > other.rank }
            return sequence < other.sequence
        }
    }

    private var heap: [Entry] = []

    package var isEmpty: Bool { heap.isEmpty }
    package var count: Int { heap.count }
    /// The best entry, left in the queue.
    package var first: Entry? { heap.first }
    /// Every entry, in no particular order (statistics).
    package var entries: [Entry] { heap }

    package mutating func insert(_ entry: Entry) {
        heap.append(entry)
        var child = heap.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard heap[child].precedes(heap[parent]) else { break }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    package mutating func popFirst() -> Entry? {
        guard !heap.isEmpty else { return nil }
        let first = heap[0]
        let last = heap.removeLast()
        if !heap.isEmpty {
            heap[0] = last
            var parent = 0
            while true {
                let left = 2 * parent + 1, right = left + 1
                var best = parent
                if left < heap.count, heap[left].precedes(heap[best]) { best = left }
                if right < heap.count, heap[right].precedes(heap[best]) { best = right }
                if best == parent { break }
                heap.swapAt(parent, best)
                parent = best
            }
        }
        return first
    }
}

/// Runs waiting for a time (a not-before in the future, the next attempt of a retrying run),
/// earliest first: a binary heap, so that one loop timer, for the earliest, serves them all.
package struct DelayedRuns {
    private var heap: [(at: Double, id: String)] = []

    package var isEmpty: Bool { heap.isEmpty }
    package var earliest: Double? { heap.first?.at }

    package mutating func insert(at time: Double, id: String) {
        heap.append((time, id))
        var child = heap.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard heap[child].at < heap[parent].at else { break }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    /// Takes every entry due at `now`.
    package mutating func popDue(_ now: Double) -> [String] {
        var due: [String] = []
        while let first = heap.first, first.at <= now {
            due.append(first.id)
            let last = heap.removeLast()
            guard !heap.isEmpty else { break }
            heap[0] = last
            var parent = 0
            while true {
                let left = 2 * parent + 1, right = left + 1
                var best = parent
                if left < heap.count, heap[left].at < heap[best].at { best = left }
                if right < heap.count, heap[right].at < heap[best].at { best = right }
                if best == parent { break }
                heap.swapAt(parent, best)
                parent = best
            }
        }
        return due
    }
}
