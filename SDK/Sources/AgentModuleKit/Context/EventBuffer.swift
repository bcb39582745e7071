/// A first-in first-out buffer of events that does not shift its storage on every pop.
struct EventBuffer: Sendable {
    private var storage: [Event] = []
    private var head = 0

    var isEmpty: Bool { head == storage.count }

    mutating func append(contentsOf events: [Event]) {
        if head == storage.count {
            storage = events
            head = 0
        } else {
            storage.append(contentsOf: events)
        }
    }

    /// Puts `events` before everything not yet served.
    mutating func prepend(contentsOf events: [Event]) {
        storage = events + storage[head...]
        head = 0
    }

    /// Everything not yet served, oldest first; the buffer is empty after.
    mutating func takeAll() -> [Event] {
        defer {
            storage = []
            head = 0
        }
        return head == 0 ? storage : Array(storage[head...])
    }

    mutating func popFirst() -> Event? {
        guard head < storage.count else { return nil }
        defer {
            head += 1
            if head == storage.count {
                storage.removeAll(keepingCapacity: true)
                head = 0
            }
        }
        return storage[head]
    }
}
