/// The queued runs of one task, best first: higher priority, then the earlier not-before time
/// (a run without one counts from its arrival), then the earlier arrival. A binary heap:
/// O(log n) to add and to take the best. Cancelled runs are not taken out; the coordinator
/// skips them when they come up (``TaskCoordinator``).
struct RunQueue {
    struct Entry {
        var id: String
        var rank: Int
        var due: Double
        var sequence: Int

        /// Whether `self` goes before `other`.
        func precedes(_ other: Entry) -> Bool {
            if rank != other.rank { return rank > other.rank }
            if due != other.due { return due < other.due }
            return sequence < other.sequence
        }
    }

    private var heap: [Entry] = []

    var isEmpty: Bool { heap.isEmpty }
    var count: Int { heap.count }

    mutating func insert(_ entry: Entry) {
        heap.append(entry)
        var child = heap.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard heap[child].precedes(heap[parent]) else { break }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    mutating func popFirst() -> Entry? {
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
struct DelayedRuns {
    private var heap: [(at: Double, id: String)] = []

    var isEmpty: Bool { heap.isEmpty }
    var earliest: Double? { heap.first?.at }

    mutating func insert(at time: Double, id: String) {
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
    mutating func popDue(_ now: Double) -> [String] {
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
