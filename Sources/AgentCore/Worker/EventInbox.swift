import AgentModuleABI

/// Events delivered to a worker, between the reader thread and the process's receives,
/// without an allocation or a lock per event.
///
/// The reader thread converts each `deliver` frame into a record in its own buffer
/// (`collect`) and publishes a whole read's worth at once (`publish`, under the host's lock). A
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

    /// Converts a `deliver` body into a record (reader thread). False if the body is malformed.
    func collect(_ body: UnsafeRawBufferPointer) -> Bool {
        guard body.count >= 2 else { return false }
        let typeLength = Int(FrameCodec.readUInt16(body, at: 0))
        guard body.count >= 4 + typeLength else { return false }
        let sourceLength = Int(FrameCodec.readUInt16(body, at: 2 + typeLength))
        let timeOffset = 4 + typeLength + sourceLength
        guard body.count >= timeOffset + 8 else { return false }
        let payloadLength = body.count - timeOffset - 8
        let size = Self.headerSize + typeLength + 1 + sourceLength + 1 + payloadLength
        collected.reserve(size)
        let base = collected.base + collected.count
        base.storeBytes(of: UInt16(typeLength), toByteOffset: 0, as: UInt16.self)
        base.storeBytes(of: UInt16(sourceLength), toByteOffset: 2, as: UInt16.self)
        base.storeBytes(of: UInt32(payloadLength), toByteOffset: 4, as: UInt32.self)
        base.storeBytes(of: FrameCodec.readInt64(body, at: timeOffset), toByteOffset: 8, as: Int64.self)
        var cursor = base + Self.headerSize
        cursor.copyMemory(from: body.baseAddress! + 2, byteCount: typeLength)
        cursor.storeBytes(of: 0, toByteOffset: typeLength, as: UInt8.self)
        cursor += typeLength + 1
        cursor.copyMemory(from: body.baseAddress! + 4 + typeLength, byteCount: sourceLength)
        cursor.storeBytes(of: 0, toByteOffset: sourceLength, as: UInt8.self)
        cursor += sourceLength + 1
        if payloadLength > 0 { cursor.copyMemory(from: body.baseAddress! + timeOffset + 8, byteCount: payloadLength) }
        collected.count += size
        collectedCount += 1
        return true
    }

    var hasCollected: Bool { collectedCount > 0 }

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
        collected.count = 0
        collectedCount = 0
        return wasEmpty
    }

    /// Whether the receiving side still has records of its own.
    var hasTaken: Bool { takenOffset < taken.count }

    /// Takes every published record for the receiving side (under the host's lock), once it
    /// has read all of its own.
    func takeAll() {
        precondition(!hasTaken)
        taken.count = 0
        takenOffset = 0
        swap(&taken, &published)
        publishedCount = 0
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
