import AgentCore

/// The events handed to the store's writer and not taken yet, oldest first, as chunks whose
/// payloads share one buffer: handing an event over copies its payload into the open chunk
/// (no allocation per event), and a run of events of one source and type (the supervisor's
/// `deliverRun` entries) is handed over with one copy and one lock. The writer inserts a
/// chunk's events with multi-row statements (see ``EventInserter``).
struct PendingEvents: Sendable {
    /// Events of one chunk at most (a run is taken whole: at most 64 KiB of entries).
    static let chunkEvents = 4096
    /// Payload bytes of one chunk of single events at most (one bigger event makes its own).
    static let chunkBytes = 256 << 10

    private var chunks: [Chunk] = []
    /// Where single events go until it is full (kept out of ``chunks``, so that appending to
    /// it never copies it).
    private var open = Singles()
    /// Events in ``chunks``.
    private(set) var count = 0

    var isEmpty: Bool { count == 0 }

    /// Events handed over one at a time (payloads back to back in `bytes`), or one run.
    enum Chunk: Sendable {
        case singles(Singles)
        case run(Run)

        /// A chunk of `events` handed over one by one (events whose publisher waits for them).
        init(_ events: [AgentStore.PendingEvent]) {
            var singles = Singles()
            for event in events {
                event.payload.withUnsafeBytes { singles.append(type: event.type, source: event.source, time: event.time, payload: $0) }
            }
            self = .singles(singles)
        }

        var count: Int {
            switch self {
            case .singles(let singles): singles.items.count
            case .run(let run): run.count
            }
        }

        /// About the bytes the chunk's events take (payloads, and a row's other columns), for
        /// the retention's `max_bytes` clock.
        var byteCount: Int {
            switch self {
            case .singles(let singles): singles.bytes.count + singles.items.count * 32
            case .run(let run): run.entries.count
            }
        }

        /// The chunk without its first `dropped` events (fewer than it holds), or nil when a
        /// run's entries do not hold that many well-formed ones (it is then dropped whole, as
        /// the writer would store fewer than its count says).
        func droppingFirst(_ dropped: Int) -> Chunk? {
            switch self {
            case .singles(var singles):
                // The payloads stay in `bytes` (the items point into it) until the chunk is written.
                singles.items.removeFirst(dropped)
                return .singles(singles)
            case .run(var run):
                let cut = run.entries.withUnsafeBytes { entries -> Int? in
                    var offset = 0
                    for _ in 0..<dropped {
                        guard let entry = EventFrame.runEntry(entries, at: offset) else { return nil }
                        offset = entry.next
                    }
                    return offset
                }
                guard let cut else { return nil }
                run.entries.removeFirst(cut)
                run.count -= dropped
                return .run(run)
            }
        }
    }

    struct Singles: Sendable {
        struct Item: Sendable {
            var time: Double
            var type: String
            var source: String
            /// The payload's bytes in ``Singles/bytes``.
            var start: Int
            var end: Int
        }
        var bytes: [UInt8] = []
        var items: [Item] = []
    }

    /// `count` events of one source and type: `entries` is a private copy of a `deliverRun`
    /// frame's entries (each the `event` frame the source emitted), read with
    /// `EventFrame.runEntry`.
    struct Run: Sendable {
        var type: String
        var source: String
        var entries: [UInt8]
        var count: Int
    }

    /// Appends one event to the open chunk of singles (a full one is closed first).
    mutating func append(type: String, source: String, time: Double, payload: UnsafeRawBufferPointer) {
        if open.items.count >= Self.chunkEvents || (!open.items.isEmpty && open.bytes.count + payload.count > Self.chunkBytes) { close() }
        if open.bytes.capacity == 0 { open.bytes.reserveCapacity(min(Self.chunkBytes, max(payload.count, 4096))) }
        open.append(type: type, source: source, time: time, payload: payload)
        count += 1
    }

    /// Appends a run of events (after the singles handed over before it).
    mutating func append(_ run: Run) {
        guard run.count > 0 else { return }
        close()
        chunks.append(.run(run))
        count += run.count
    }

    /// Moves the open chunk of singles to ``chunks``.
    private mutating func close() {
        guard !open.items.isEmpty else { return }
        chunks.append(.singles(open))
        open = Singles()
    }

    /// Drops the oldest events until `room` more fit under `limit` (with a tenth of it to
    /// spare, so that a full queue does not drop at every event); returns how many went: as
    /// many as that takes and no more (a chunk is cut, not dropped whole, so that a small
    /// queue_limit is not emptied by one overflow).
    mutating func makeRoom(for room: Int, limit: Int) -> Int {
        guard count + room > limit else { return 0 }
        close()
        let target = max(0, limit - max(1, limit / 10) - room)
        var dropped = 0, first = 0
        while first < chunks.count, count - dropped > target {
            let excess = count - dropped - target
            guard excess < chunks[first].count, let cut = chunks[first].droppingFirst(excess) else {
                dropped += chunks[first].count
                first += 1
                continue
            }
            chunks[first] = cut
            dropped += excess
        }
        chunks.removeFirst(first)
        count -= dropped
        return dropped
    }

    /// Takes the oldest chunks holding at least `limit` events (or all there are).
    mutating func take(atLeast limit: Int) -> [Chunk] {
        close()
        var taken = 0, end = 0
        while end < chunks.count, taken < limit {
            taken += chunks[end].count
            end += 1
        }
        let batch = Array(chunks[..<end])
        chunks.removeFirst(end)
        count -= taken
        return batch
    }
}

extension PendingEvents.Singles {
    mutating func append(type: String, source: String, time: Double, payload: UnsafeRawBufferPointer) {
        let start = bytes.count
        bytes.append(contentsOf: payload)
        items.append(Item(time: time, type: type, source: source, start: start, end: bytes.count))
    }
}
