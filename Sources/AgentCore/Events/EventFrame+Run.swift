/// `deliverRun` frames (supervisor → worker): consecutive events of one source and one type
/// for one subscriber, in one frame.
///
/// Body: `u32 count, u16 typeLength, type, NUL, u16 sourceLength, source, NUL`, then `count`
/// entries, each the `event` frame its source emitted, unchanged (`u32 length, u8 kind, u16
/// typeLength, type, i64 timeNanoseconds, payload`). The supervisor copies a run of them from
/// the source's emit ring at once, after checking that each is an event of the run's type, and
/// checks the copy again for well-formed entries (the source could have changed its ring in
/// between). A receiver takes type and source from the run's header (which the supervisor
/// wrote), never from an entry, and only time and payload from each entry.
extension EventFrame {
    /// The most entry bytes in one run (one event bigger than that goes alone): dropping the
    /// oldest events stays fine-grained.
    public static let runEntriesLimit = 64 << 10

    /// The size of a run frame's header, the frame's own header included.
    @inlinable
    public static func runHeaderLength(typeCount: Int, sourceCount: Int) -> Int {
        FrameCodec.headerLength + 4 + 2 + typeCount + 1 + 2 + sourceCount + 1
    }

    /// Writes the header of a run frame of `count` events whose entries take `entriesLength`
    /// bytes (they follow it).
    @inlinable
    public static func storeRunHeader(type: UnsafeRawBufferPointer, source: UnsafeRawBufferPointer, count: Int, entriesLength: Int,
                                      at frame: UnsafeMutableRawPointer) {
        let headerLength = runHeaderLength(typeCount: type.count, sourceCount: source.count)
        FrameCodec.storeHeader(.deliverRun, bodyLength: headerLength - FrameCodec.headerLength + entriesLength, at: frame)
        var cursor = frame + FrameCodec.headerLength
        cursor.storeBytes(of: UInt32(count).littleEndian, as: UInt32.self)
        cursor += 4
        storeCounted(type, at: &cursor, terminated: true)
        storeCounted(source, at: &cursor, terminated: true)
    }

    /// Appends a run frame of `entries`, `count` emitted frames checked where they lay (in a
    /// worker's emit ring), and checks them again in the copy, where they can no longer change:
    /// if they are not `count` well-formed `event` frames filling `entries` any more, the frame
    /// holds only the well-formed first ones (no frame at all without any). The entries' types
    /// are not compared again: receivers take the header's. Returns how many events the frame
    /// holds, and whether they are still `count` well-formed frames filling `entries`.
    public static func appendRun(_ entries: UnsafeRawBufferPointer, count: Int, type: UnsafeRawBufferPointer, source: UnsafeRawBufferPointer,
                                 to buffer: FrameBuffer) -> (count: Int, intact: Bool) {
        guard count > 0, entries.count > 0 else { return (0, count == 0) }
        let header = runHeaderLength(typeCount: type.count, sourceCount: source.count)
        var checked = (count: 0, bytes: 0)
        buffer.append(header + entries.count) { frame in
            (frame + header).copyMemory(from: entries.baseAddress!, byteCount: entries.count)
            let copy = UnsafeRawBufferPointer(start: frame + header, count: entries.count)
            while checked.count < count, let entry = runEntry(copy, at: checked.bytes) {
                checked = (checked.count + 1, entry.next)
            }
            storeRunHeader(type: type, source: source, count: checked.count, entriesLength: checked.bytes, at: frame)
        }
        if checked.bytes < entries.count {
            let end = buffer.count
            buffer.removeSubrange((checked.count == 0 ? end - header - entries.count : end - entries.count + checked.bytes)..<end)
        }
        return (checked.count, checked.count == count && checked.bytes == entries.count)
    }

    /// The parts of a `deliverRun` body, as views into it.
    public struct Run {
        public var count: Int
        /// Followed by a NUL in the body.
        public var type: UnsafeRawBufferPointer
        /// Followed by a NUL in the body.
        public var source: UnsafeRawBufferPointer
        public var entries: UnsafeRawBufferPointer
    }

    /// Splits a `deliverRun` body into its header's parts and its entries (checked one by one
    /// with ``runEntry(_:at:)``).
    public static func parseRun(_ body: UnsafeRawBufferPointer) throws -> Run {
        guard body.count >= 4 else { throw FrameError("deliver-run frame too short") }
        let type = try terminatedName(body, at: 4, in: "deliver-run")
        guard type.name.count > 0 else { throw FrameError("deliver-run frame without a type") }
        let source = try terminatedName(body, at: type.next, in: "deliver-run")
        return Run(count: Int(FrameCodec.readUInt32(body, at: 0)), type: type.name, source: source.name,
                   entries: UnsafeRawBufferPointer(rebasing: body[source.next...]))
    }

    /// The time and payload of the run entry at `offset` in `entries`, and where the next entry
    /// starts; nil when no well-formed `event` frame starts there.
    @inlinable
    public static func runEntry(_ entries: UnsafeRawBufferPointer, at offset: Int) -> (time: Int64, payload: UnsafeRawBufferPointer, next: Int)? {
        guard entries.count - offset >= FrameCodec.headerLength + 2 else { return nil }
        let length = Int(FrameCodec.readUInt32(entries, at: offset))
        let next = offset + 4 + length
        guard length >= 1 + 2, next <= entries.count, entries[offset + 4] == FrameKind.event.rawValue else { return nil }
        let timeOffset = offset + FrameCodec.headerLength + 2 + Int(FrameCodec.readUInt16(entries, at: offset + FrameCodec.headerLength))
        guard timeOffset + 8 <= next else { return nil }
        return (FrameCodec.readInt64(entries, at: timeOffset), UnsafeRawBufferPointer(rebasing: entries[(timeOffset + 8)..<next]), next)
    }

    /// How many events the delivery frame at `offset` in `frames` holds (`deliver`: 1, `deliverRun`:
    /// the count in its header; the frame's length was checked).
    public static func deliveryEvents(_ frames: UnsafeRawBufferPointer, at offset: Int) -> Int {
        guard frames[offset + 4] == FrameKind.deliverRun.rawValue else { return 1 }
        guard frames.count - offset >= FrameCodec.headerLength + 4 else { return 0 }
        return Int(FrameCodec.readUInt32(frames, at: offset + FrameCodec.headerLength))
    }
}
