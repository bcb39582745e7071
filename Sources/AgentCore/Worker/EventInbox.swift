import AgentModuleABI

/// Events delivered to a worker, between the reader thread and the process's receives,
/// without an allocation or a lock per event.
///
/// The reader thread converts each `deliver` frame (and each entry of a `deliverRun`) into a
/// record in its own buffer (`collect`, `collectRun`) and publishes a whole read's worth at once (`publish`, under the host's lock). A
/// receive takes everything published in one swap (`takeAll`, under the lock) and then hands
/// out pointers into its own buffer (`next`), which stays untouched until the receive after the
/// last of them: the lifetime `agent_event` promises.
///
/// Record: `u16 typeLength, u16 sourceLength, u32 payloadLength, i64 time`, then type NUL
/// source NUL payload.
final class EventInbox {
    private static let headerSize = 16
    /// The reader thread's records not yet published (reader thread only).
    private var collected = Bytes(capacity: 64 << 10)
    private var collectedCount = 0
    /// Frame bytes of the deliveries collected, malformed ones included (reader thread), then
    /// published (under the host's lock): what a take reports to the supervisor.
    private var collectedFrameBytes = 0
    private var publishedFrameBytes = 0
    /// Published records (under the host's lock).
    private var published = Bytes(capacity: 64 << 10)
    private(set) var publishedCount = 0
    /// The receiving side's records and how far it has read (receiving thread only).
    private var taken = Bytes(capacity: 64 << 10)
    private var takenOffset = 0

    /// A growable buffer whose address changes only when it grows (never while the receiving
    /// side reads from it).
    private struct Bytes {
        var base: UnsafeMutableRawPointer
        var capacity: Int
        var count = 0

        init(capacity: Int) {
            base = .allocate(byteCount: capacity, alignment: 16)
            self.capacity = capacity
        }

        mutating func reserve(_ extra: Int) {
            guard count + extra > capacity else { return }
            let grown = max(capacity * 2, count + extra)
            let bigger = UnsafeMutableRawPointer.allocate(byteCount: grown, alignment: 16)
            bigger.copyMemory(from: base, byteCount: count)
            base.deallocate()
            base = bigger
            capacity = grown
        }

        mutating func append(_ other: Bytes) {
            reserve(other.count)
            (base + count).copyMemory(from: other.base, byteCount: other.count)
            count += other.count
        }
    }

    deinit {
        collected.base.deallocate()
        published.base.deallocate()
        taken.base.deallocate()
    }

    /// Converts a `deliver` body into a record (reader thread). False if the body is malformed
    /// (its frame still counts as taken, or the supervisor's delivery window would shrink).
    func collect(_ body: UnsafeRawBufferPointer) -> Bool {
        collectedFrameBytes += FrameCodec.headerLength + body.count
        guard let event = try? EventFrame.parseDelivered(body) else { return false }
        record(type: event.type, source: event.source, time: event.timeNanoseconds, payload: event.payload)
        return true
    }

    /// Converts a `deliverRun` body into records, up to its first malformed entry (reader
    /// thread). False if the body is malformed.
    func collectRun(_ body: UnsafeRawBufferPointer) -> Bool {
        collectedFrameBytes += FrameCodec.headerLength + body.count
        guard let run = try? EventFrame.parseRun(body) else { return false }
        var offset = 0
        while let entry = EventFrame.runEntry(run.entries, at: offset) {
            record(type: run.type, source: run.source, time: entry.time, payload: entry.payload)
            offset = entry.next
        }
        return offset == run.entries.count
    }

    private func record(type: UnsafeRawBufferPointer, source: UnsafeRawBufferPointer, time: Int64, payload: UnsafeRawBufferPointer) {
        let event = (type: type, source: source, timeNanoseconds: time, payload: payload)
        let size = Self.headerSize + event.type.count + 1 + event.source.count + 1 + event.payload.count
        collected.reserve(size)
        let base = collected.base + collected.count
        base.storeBytes(of: UInt16(event.type.count), toByteOffset: 0, as: UInt16.self)
        base.storeBytes(of: UInt16(event.source.count), toByteOffset: 2, as: UInt16.self)
        base.storeBytes(of: UInt32(event.payload.count), toByteOffset: 4, as: UInt32.self)
        base.storeBytes(of: event.timeNanoseconds, toByteOffset: 8, as: Int64.self)
        var cursor = base + Self.headerSize
        // A NUL after type and source: the header promises terminated strings.
        func putTerminated(_ text: UnsafeRawBufferPointer) {
            if text.count > 0 { cursor.copyMemory(from: text.baseAddress!, byteCount: text.count) }
            cursor.storeBytes(of: 0, toByteOffset: text.count, as: UInt8.self)
            cursor += text.count + 1
        }
        putTerminated(event.type)
        putTerminated(event.source)
        if event.payload.count > 0 { cursor.copyMemory(from: event.payload.baseAddress!, byteCount: event.payload.count) }
        collected.count += size
        collectedCount += 1
    }

    var hasCollected: Bool { collectedFrameBytes > 0 }

    /// Moves the collected records behind the published ones (call under the host's lock).
    /// Returns whether the published queue was empty before.
    func publish() -> Bool {
        let wasEmpty = publishedCount == 0
        if wasEmpty {
            swap(&published, &collected)
        } else {
            published.append(collected)
        }
        publishedCount += collectedCount
        publishedFrameBytes += collectedFrameBytes
        collected.count = 0
        collectedCount = 0
        collectedFrameBytes = 0
        return wasEmpty
    }

    /// Whether the receiving side still has records of its own.
    var hasTaken: Bool { takenOffset < taken.count }

    /// Takes every published record for the receiving side (under the host's lock), once it
    /// has read all of its own. Returns the size of the delivery frames they came in.
    @discardableResult
    func takeAll() -> Int {
        precondition(!hasTaken)
        taken.count = 0
        takenOffset = 0
        swap(&taken, &published)
        defer {
            publishedCount = 0
            publishedFrameBytes = 0
        }
        return publishedFrameBytes
    }

    /// The next record as an `agent_event` pointing into the receiving side's buffer, or nil.
    func next() -> agent_event? {
        guard hasTaken else { return nil }
        let base = taken.base + takenOffset
        let typeLength = Int(base.loadUnaligned(as: UInt16.self))
        let sourceLength = Int(base.loadUnaligned(fromByteOffset: 2, as: UInt16.self))
        let payloadLength = Int(base.loadUnaligned(fromByteOffset: 4, as: UInt32.self))
        let time = base.loadUnaligned(fromByteOffset: 8, as: Int64.self)
        let type = base + Self.headerSize
        let source = type + typeLength + 1
        let payload = source + sourceLength + 1
        takenOffset += Self.headerSize + typeLength + 1 + sourceLength + 1 + payloadLength
        return agent_event(
            type: UnsafePointer(type.assumingMemoryBound(to: CChar.self)), type_len: typeLength,
            source: UnsafePointer(source.assumingMemoryBound(to: CChar.self)), source_len: sourceLength,
            time_ns: time,
            payload: UnsafePointer(payload.assumingMemoryBound(to: UInt8.self)), payload_len: payloadLength)
    }
}
