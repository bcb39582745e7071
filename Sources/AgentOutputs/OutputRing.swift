/// A FIFO of records bounded by a count and by bytes, that drops its oldest records to make
/// room for a new one. Not thread-safe: `OutputChannel` guards it with its lock.
package struct OutputRing: Sendable {
    private var slots: [OutputRecord?]
    private var head = 0
    package private(set) var count = 0
    /// What the queued records hold (see ``OutputRecord/queuedBytes``).
    package private(set) var bytes = 0
    /// The most bytes the queue keeps: a record that would pass it drops the oldest first; one
    /// larger on its own waits alone.
    package let byteLimit: Int

    package init(capacity: Int, byteLimit: Int = .max) {
        slots = Array(repeating: nil, count: max(1, capacity))
        self.byteLimit = max(1, byteLimit)
    }

    package var capacity: Int { slots.count }

    /// Appends `record`; returns how many of the oldest records were dropped to make room.
    package mutating func append(_ record: OutputRecord) -> Int {
        let size = record.queuedBytes
        var dropped = 0
        while count > 0, count == slots.count || bytes > byteLimit - min(size, byteLimit) {
            dropOldest()
            dropped += 1
        }
        slots[(head + count) % slots.count] = record
        count += 1
        bytes += size
        return dropped
    }

    private mutating func dropOldest() {
        bytes -= slots[head]?.queuedBytes ?? 0
        slots[head] = nil
        head = (head + 1) % slots.count
        count -= 1
    }

    /// Removes and returns up to `limit` records, oldest first.
    package mutating func removeFirst(upTo limit: Int) -> [OutputRecord] {
        let n = min(limit, count)
        var taken: [OutputRecord] = []
        taken.reserveCapacity(n)
        for _ in 0..<n {
            if let record = slots[head] {
                taken.append(record)
                bytes -= record.queuedBytes
            }
            slots[head] = nil
            head = (head + 1) % slots.count
        }
        count -= n
        return taken
    }
}
