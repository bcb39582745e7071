/// Bodies of the event frames.
///
/// - ``FrameKind/event`` (worker → supervisor): `u16 typeLength, type, i64 timeNanoseconds, payload`.
///   The source is implied by the connection.
/// - ``FrameKind/deliver`` (supervisor → worker): `u16 typeLength, type, NUL, u16 sourceLength,
///   source, NUL, i64 timeNanoseconds, payload`. The NULs let a worker hand out type and source
///   as C strings where the frame lies (its delivery ring) instead of copying them.
/// - ``FrameKind/deliverRun`` (supervisor → worker): consecutive `event` frames of one source
///   and type behind one header; see `EventFrame+Run.swift`.
public struct EventFrame: Equatable, Sendable {
    public var type: String
    public var source: String
    public var timeNanoseconds: Int64
    public var payload: [UInt8]

    public init(type: String, source: String, timeNanoseconds: Int64, payload: [UInt8]) {
        self.type = type
        self.source = source
        self.timeNanoseconds = timeNanoseconds
        self.payload = payload
    }

    /// Appends an `event` frame (what a worker sends).
    public static func appendEmitted(type: UnsafeRawBufferPointer, timeNanoseconds: Int64, payload: UnsafeRawBufferPointer, to buffer: FrameBuffer) {
        let bodyLength = 2 + type.count + 8 + payload.count
        buffer.append(FrameCodec.headerLength + bodyLength) { frame in
            FrameCodec.storeHeader(.event, bodyLength: bodyLength, at: frame)
            var cursor = frame + FrameCodec.headerLength
            storeCounted(type, at: &cursor)
            cursor.storeBytes(of: timeNanoseconds.littleEndian, as: Int64.self)
            cursor += 8
            if payload.count > 0 { cursor.copyMemory(from: payload.baseAddress!, byteCount: payload.count) }
        }
    }

    /// The parts of an `event` body, as views into it.
    public struct Emitted {
        public var type: UnsafeRawBufferPointer
        public var timeNanoseconds: Int64
        public var payload: UnsafeRawBufferPointer

        public init(type: UnsafeRawBufferPointer, timeNanoseconds: Int64, payload: UnsafeRawBufferPointer) {
            self.type = type
            self.timeNanoseconds = timeNanoseconds
            self.payload = payload
        }
    }

    public static func parseEmitted(_ body: UnsafeRawBufferPointer) throws -> Emitted {
        guard body.count >= 2 else { throw FrameError("event frame too short") }
        let typeLength = Int(FrameCodec.readUInt16(body, at: 0))
        guard typeLength > 0, body.count >= 2 + typeLength + 8 else { throw FrameError("event frame truncated") }
        return Emitted(
            type: UnsafeRawBufferPointer(rebasing: body[2..<(2 + typeLength)]),
            timeNanoseconds: FrameCodec.readInt64(body, at: 2 + typeLength),
            payload: UnsafeRawBufferPointer(rebasing: body[(2 + typeLength + 8)...])
        )
    }

    /// The size of the `deliver` frame of an event (header included).
    @inlinable
    public static func deliveryLength(typeCount: Int, sourceCount: Int, payloadCount: Int) -> Int {
        FrameCodec.headerLength + 2 + typeCount + 1 + 2 + sourceCount + 1 + 8 + payloadCount
    }

    /// Appends a `deliver` frame built from an emitted event and its source.
    @inlinable
    public static func appendDelivery(_ emitted: Emitted, source: UnsafeRawBufferPointer, to buffer: FrameBuffer) {
        let frameLength = deliveryLength(typeCount: emitted.type.count, sourceCount: source.count, payloadCount: emitted.payload.count)
        buffer.append(frameLength) { frame in
            FrameCodec.storeHeader(.deliver, bodyLength: frameLength - FrameCodec.headerLength, at: frame)
            var cursor = frame + FrameCodec.headerLength
            storeCounted(emitted.type, at: &cursor, terminated: true)
            storeCounted(source, at: &cursor, terminated: true)
            cursor.storeBytes(of: emitted.timeNanoseconds.littleEndian, as: Int64.self)
            cursor += 8
            if emitted.payload.count > 0 { cursor.copyMemory(from: emitted.payload.baseAddress!, byteCount: emitted.payload.count) }
        }
    }

    /// The parts of a `deliver` body, as views into it.
    public struct Delivered {
        public var type: UnsafeRawBufferPointer
        public var source: UnsafeRawBufferPointer
        public var timeNanoseconds: Int64
        public var payload: UnsafeRawBufferPointer
    }

    /// Splits a `deliver` body into views, without copying; type and source are followed by
    /// their NUL.
    public static func parseDelivered(_ body: UnsafeRawBufferPointer) throws -> Delivered {
        let type = try terminatedName(body, at: 0, in: "deliver")
        let source = try terminatedName(body, at: type.next, in: "deliver")
        guard body.count >= source.next + 8 else { throw FrameError("deliver frame truncated") }
        return Delivered(type: type.name, source: source.name, timeNanoseconds: FrameCodec.readInt64(body, at: source.next),
                         payload: UnsafeRawBufferPointer(rebasing: body[(source.next + 8)...]))
    }

    /// The `u16 length, name, NUL` at `offset` in a `frame` body (`deliver`, `deliver-run`), and
    /// where what follows it starts.
    @inlinable
    static func terminatedName(_ body: UnsafeRawBufferPointer, at offset: Int, in frame: String) throws -> (name: UnsafeRawBufferPointer, next: Int) {
        guard body.count >= offset + 2 else { throw FrameError("\(frame) frame truncated") }
        let end = offset + 2 + Int(FrameCodec.readUInt16(body, at: offset))
        guard body.count > end else { throw FrameError("\(frame) frame truncated") }
        guard body[end] == 0 else { throw FrameError("\(frame) frame without its NULs") }
        return (UnsafeRawBufferPointer(rebasing: body[(offset + 2)..<end]), end + 1)
    }

    /// Decodes a `deliver` body into owned values.
    public static func parseDelivery(_ body: UnsafeRawBufferPointer) throws -> EventFrame {
        let parts = try parseDelivered(body)
        return EventFrame(
            type: String(decoding: parts.type, as: UTF8.self),
            source: String(decoding: parts.source, as: UTF8.self),
            timeNanoseconds: parts.timeNanoseconds,
            payload: Array(parts.payload)
        )
    }

    /// Writes `part` after its `u16` length (and before a NUL if `terminated`) at `cursor`,
    /// and moves `cursor` past it.
    @inlinable
    static func storeCounted(_ part: UnsafeRawBufferPointer, at cursor: inout UnsafeMutableRawPointer, terminated: Bool = false) {
        cursor.storeBytes(of: UInt16(part.count).littleEndian, as: UInt16.self)
        cursor += 2
        if part.count > 0 { cursor.copyMemory(from: part.baseAddress!, byteCount: part.count) }
        cursor += part.count
        if terminated {
            cursor.storeBytes(of: 0, as: UInt8.self)
            cursor += 1
        }
    }
}
