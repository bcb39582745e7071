/// A fixed-capacity FIFO of records that drops its oldest record to make room for a new one.
/// Not thread-safe: `OutputChannel` guards it with its lock.
package struct OutputRing: Sendable {
    private var slots: [OutputRecord?]
    private var head = 0
    package private(set) var count = 0

    package init(capacity: Int) {
        slots = Array(repeating: nil, count: max(1, capacity))
    }

    package var capacity: Int { slots.count }

    /// Appends `record`; returns `true` when the oldest record was dropped to make room.
    package mutating func append(_ record: OutputRecord) -> Bool {
        if count == slots.count {
            slots[head] = record
            head = (head + 1) % slots.count
            return true
        }
        slots[(head + count) % slots.count] = record
        count += 1
        return false
    }

    /// Removes and returns up to `limit` records, oldest first.
    package mutating func removeFirst(upTo limit: Int) -> [OutputRecord] {
        let n = min(limit, count)
        var taken: [OutputRecord] = []
        taken.reserveCapacity(n)
        for _ in 0..<n {
            if let record = slots[head] { taken.append(record) }
            slots[head] = nil
            head = (head + 1) % slots.count
        }
        count -= n
        return taken
    }
}
