/// Bodies of the event frames.
///
/// - ``FrameKind/event`` (worker → supervisor): `u16 typeLength, type, i64 timeNanoseconds, payload`.
///   The source is implied by the connection.
/// - ``FrameKind/deliver`` (supervisor → worker): `u16 typeLength, type, u16 sourceLength,
///   source, i64 timeNanoseconds, payload`.
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
    public static func appendEmitted(type: UnsafeRawBufferPointer, timeNanoseconds: Int64, payload: UnsafeRawBufferPointer, to buffer: inout [UInt8]) {
        FrameCodec.appendHeader(.event, bodyLength: 2 + type.count + 8 + payload.count, to: &buffer)
        FrameCodec.appendUInt16(UInt16(type.count), to: &buffer)
        buffer.append(contentsOf: type)
        FrameCodec.appendInt64(timeNanoseconds, to: &buffer)
        buffer.append(contentsOf: payload)
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

    /// Appends a `deliver` frame built from an emitted event and its source.
    public static func appendDelivery(_ emitted: Emitted, source: [UInt8], to buffer: inout [UInt8]) {
        FrameCodec.appendHeader(.deliver, bodyLength: 2 + emitted.type.count + 2 + source.count + 8 + emitted.payload.count, to: &buffer)
        FrameCodec.appendUInt16(UInt16(emitted.type.count), to: &buffer)
        buffer.append(contentsOf: emitted.type)
        FrameCodec.appendUInt16(UInt16(source.count), to: &buffer)
        buffer.append(contentsOf: source)
        FrameCodec.appendInt64(emitted.timeNanoseconds, to: &buffer)
        buffer.append(contentsOf: emitted.payload)
    }

    /// Decodes a `deliver` body into owned values.
    public static func parseDelivery(_ body: UnsafeRawBufferPointer) throws -> EventFrame {
        guard body.count >= 2 else { throw FrameError("deliver frame too short") }
        let typeLength = Int(FrameCodec.readUInt16(body, at: 0))
        guard body.count >= 2 + typeLength + 2 else { throw FrameError("deliver frame truncated") }
        let sourceLength = Int(FrameCodec.readUInt16(body, at: 2 + typeLength))
        let timeOffset = 2 + typeLength + 2 + sourceLength
        guard body.count >= timeOffset + 8 else { throw FrameError("deliver frame truncated") }
        return EventFrame(
            type: String(decoding: body[2..<(2 + typeLength)], as: UTF8.self),
            source: String(decoding: body[(4 + typeLength)..<timeOffset], as: UTF8.self),
            timeNanoseconds: FrameCodec.readInt64(body, at: timeOffset),
            payload: Array(body[(timeOffset + 8)...])
        )
    }
}
