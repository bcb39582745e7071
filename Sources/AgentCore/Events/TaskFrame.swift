/// The bodies of the task frames between the supervisor and a task executor worker.
///
/// A run is named on the wire by a token (a `UInt64` the supervisor hands out), so that each
/// frame after `taskRun` carries 8 bytes, not the run id. Integers are little-endian. The
/// input and output cross as the JSON bytes they are: neither side parses them on the way.
public enum TaskFrame {
    /// `taskRun`: token (8), attempt (4), run id length (2), idempotency key length (2),
    /// not-before (8: nanoseconds since the epoch on CLOCK_REALTIME, 0 for none), run id,
    /// idempotency key, input JSON. A run with a not-before still to come is held by the worker
    /// and handed to the module at that instant (a schedule's fires are sent ahead).
    public static func appendRun(token: UInt64, attempt: Int, runID: String, idempotencyKey: String, notBefore: Int64 = 0,
                                 input: [UInt8], to buffer: FrameBuffer) {
        let id = Array(runID.utf8.prefix(Int(UInt16.max)))
        let key = Array(idempotencyKey.utf8.prefix(Int(UInt16.max)))
        FrameCodec.appendHeader(.taskRun, bodyLength: runHeaderLength + id.count + key.count + input.count, to: buffer)
        appendUInt64(token, to: buffer)
        let attempt = UInt32(clamping: attempt)
        for shift in stride(from: 0, to: 32, by: 8) { buffer.append(UInt8(truncatingIfNeeded: attempt >> UInt32(shift))) }
        for length in [id.count, key.count] {
            buffer.append(UInt8(truncatingIfNeeded: length))
            buffer.append(UInt8(truncatingIfNeeded: length >> 8))
        }
        appendUInt64(UInt64(bitPattern: max(notBefore, 0)), to: buffer)
        buffer.append(contentsOf: id)
        buffer.append(contentsOf: key)
        buffer.append(contentsOf: input)
    }

    static let runHeaderLength = 24

    /// A decoded `taskRun` body; its buffers point into the frame.
    public struct Run {
        public var token: UInt64
        public var attempt: UInt32
        /// Nanoseconds since the epoch (CLOCK_REALTIME); 0: start at once.
        public var notBefore: Int64
        public var runID: UnsafeRawBufferPointer
        public var idempotencyKey: UnsafeRawBufferPointer
        public var input: UnsafeRawBufferPointer
    }

    public static func parseRun(_ body: UnsafeRawBufferPointer) -> Run? {
        guard body.count >= runHeaderLength else { return nil }
        let idLength = Int(FrameCodec.readUInt16(body, at: 12))
        let keyLength = Int(FrameCodec.readUInt16(body, at: 14))
        let keyStart = runHeaderLength + idLength, inputStart = keyStart + keyLength
        guard body.count >= inputStart else { return nil }
        return Run(token: token(body)!, attempt: FrameCodec.readUInt32(body, at: 8), notBefore: FrameCodec.readInt64(body, at: 16),
                   runID: UnsafeRawBufferPointer(rebasing: body[runHeaderLength..<keyStart]),
                   idempotencyKey: UnsafeRawBufferPointer(rebasing: body[keyStart..<inputStart]),
                   input: UnsafeRawBufferPointer(rebasing: body[inputStart...]))
    }

    /// `taskCancel` and `taskHeartbeat`: the token alone.
    public static func append(_ kind: FrameKind, token: UInt64, to buffer: FrameBuffer) {
        FrameCodec.appendHeader(kind, bodyLength: 8, to: buffer)
        appendUInt64(token, to: buffer)
    }

    /// `taskProgress`: token (8), fraction as IEEE 754 bits (8; NaN: unknown), message.
    public static func appendProgress(token: UInt64, fraction: Double?, message: UnsafeRawBufferPointer, to buffer: FrameBuffer) {
        FrameCodec.appendHeader(.taskProgress, bodyLength: 16 + message.count, to: buffer)
        appendUInt64(token, to: buffer)
        appendUInt64((fraction ?? .nan).bitPattern, to: buffer)
        buffer.append(message)
    }

    public static func parseProgress(_ body: UnsafeRawBufferPointer) -> (token: UInt64, fraction: Double?, message: UnsafeRawBufferPointer)? {
        guard body.count >= 16, let token = token(body) else { return nil }
        let fraction = Double(bitPattern: UInt64(bitPattern: FrameCodec.readInt64(body, at: 8)))
        return (token, fraction.isNaN ? nil : fraction, UnsafeRawBufferPointer(rebasing: body[16...]))
    }

    /// `taskResult`: token (8), status (1: 0 succeeded with the output JSON, 1 failed with
    /// the error message), the bytes.
    public static func appendResult(token: UInt64, succeeded: Bool, data: UnsafeRawBufferPointer, to buffer: FrameBuffer) {
        FrameCodec.appendHeader(.taskResult, bodyLength: 9 + data.count, to: buffer)
        appendUInt64(token, to: buffer)
        buffer.append(succeeded ? 0 : 1)
        buffer.append(data)
    }

    public static func parseResult(_ body: UnsafeRawBufferPointer) -> (token: UInt64, succeeded: Bool, data: UnsafeRawBufferPointer)? {
        guard body.count >= 9, let token = token(body) else { return nil }
        return (token, body[8] == 0, UnsafeRawBufferPointer(rebasing: body[9...]))
    }

    /// The token at the start of a task frame's body.
    public static func token(_ body: UnsafeRawBufferPointer) -> UInt64? {
        guard body.count >= 8 else { return nil }
        return UInt64(bitPattern: FrameCodec.readInt64(body, at: 0))
    }

    private static func appendUInt64(_ value: UInt64, to buffer: FrameBuffer) {
        buffer.append(8) { $0.storeBytes(of: value.littleEndian, as: UInt64.self) }
    }
}
