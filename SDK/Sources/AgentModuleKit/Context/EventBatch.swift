/// Events fetched from the host at once, built in place and moved out one at a time: serving
/// an event costs no retain, and no placeholder is left behind to be released with the batch.
@usableFromInline
final class EventBatch: ManagedBuffer<EventBatch.Counts, Event> {
    @usableFromInline
    struct Counts {
        let capacity: Int
        /// Events built.
        var count = 0
        /// Events moved out, from the start; the rest are released with the batch.
        var served = 0
    }

    /// An empty batch with room for `capacity` events.
    static func make(capacity: Int) -> EventBatch {
        unsafeDowncast(create(minimumCapacity: capacity) { _ in Counts(capacity: capacity) }, to: EventBatch.self)
    }

    /// A batch holding copies of `events`.
    static func make(_ events: [Event]) -> EventBatch {
        let batch = make(capacity: events.count)
        for event in events { batch.append(event) }
        return batch
    }

    deinit {
        _ = withUnsafeMutablePointers { counts, events in
            (events + counts.pointee.served).deinitialize(count: counts.pointee.count - counts.pointee.served)
        }
    }

    var count: Int { header.count }

    /// Adds an event while the batch is made.
    func append(_ event: Event) {
        withUnsafeMutablePointers { counts, events in
            precondition(counts.pointee.count < counts.pointee.capacity, "event batch overflow")
            (events + counts.pointee.count).initialize(to: event)
            counts.pointee.count += 1
        }
    }

    /// Where the events are; valid while the batch lives (its storage never moves).
    var events: UnsafeMutablePointer<Event> { withUnsafeMutablePointerToElements { $0 } }

    /// Records that the first `served` events were moved out by whoever read ``events``.
    func noteServed(_ served: Int) {
        withUnsafeMutablePointerToHeader { $0.pointee.served = served }
    }

    /// The events not served yet, moved out into an array.
    func takeRest() -> [Event] {
        withUnsafeMutablePointers { counts, events in
            let start = counts.pointee.served
            guard counts.pointee.count > start else { return [] }
            let rest = Array(unsafeUninitializedCapacity: counts.pointee.count - start) { buffer, initialized in
                buffer.baseAddress!.moveInitialize(from: events + start, count: counts.pointee.count - start)
                initialized = counts.pointee.count - start
            }
            counts.pointee.served = counts.pointee.count
            return rest
        }
    }
}
