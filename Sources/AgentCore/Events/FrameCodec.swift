/// The wire protocol between supervisor and workers: length-prefixed frames on a stream
/// socket. A frame is a little-endian `UInt32` length `n`, then `n` bytes: one ``FrameKind``
/// byte and the body. Writers batch several frames per `write` under load.
public enum FrameCodec {
    /// Frames larger than this are a protocol error (the peer is broken or hostile).
    public static let maxFrameLength = 16 << 20
    /// The most bytes of a payload, text or result one frame carries, with room left for the
    /// frame's own fields (a type, an id, a token).
    public static let largestPart = maxFrameLength - 1024
    /// Bytes before the body: length (4) and kind (1).
    public static let headerLength = 5
    /// The most bytes of `deliver` and `deliverRun` frames the supervisor has on the way to a
    /// worker on its socket (in the socket, or read by the worker and not yet taken for the
    /// module) before the worker reports them taken; the rest waits in the supervisor's queue
    /// for the process. The frame that crosses the limit goes whole. Other frames are not
    /// counted and go ahead of queued deliveries. With a delivery ring (``SharedRing``), only
    /// frames too big for it go on the socket.
    public static let deliveryWindow = 1 << 20

    /// Appends one frame to `buffer`.
    @inlinable
    public static func append(_ kind: FrameKind, body: some Collection<UInt8>, to buffer: inout [UInt8]) {
        appendHeader(kind, bodyLength: body.count, to: &buffer)
        buffer.append(contentsOf: body)
    }

    /// Appends the header of a frame whose body of `bodyLength` bytes the caller appends next.
    @inlinable
    public static func appendHeader(_ kind: FrameKind, bodyLength: Int, to buffer: inout [UInt8]) {
        appendUInt32(UInt32(bodyLength + 1), to: &buffer)
        buffer.append(kind.rawValue)
    }

    /// Appends one frame to `buffer`.
    public static func append(_ kind: FrameKind, body: some Collection<UInt8>, to buffer: FrameBuffer) {
        appendHeader(kind, bodyLength: body.count, to: buffer)
        buffer.append(contentsOf: body)
    }

    /// Appends the header of a frame whose body of `bodyLength` bytes the caller appends next.
    public static func appendHeader(_ kind: FrameKind, bodyLength: Int, to buffer: FrameBuffer) {
        buffer.append(headerLength) { storeHeader(kind, bodyLength: bodyLength, at: $0) }
    }

    /// Writes the `headerLength` bytes of a frame's header at `frame`.
    @inlinable
    public static func storeHeader(_ kind: FrameKind, bodyLength: Int, at frame: UnsafeMutableRawPointer) {
        frame.storeBytes(of: UInt32(bodyLength + 1).littleEndian, as: UInt32.self)
        frame.storeBytes(of: kind.rawValue, toByteOffset: 4, as: UInt8.self)
    }

    @inlinable
    public static func appendUInt32(_ value: UInt32, to buffer: inout [UInt8]) {
        buffer.append(UInt8(truncatingIfNeeded: value))
        buffer.append(UInt8(truncatingIfNeeded: value >> 8))
        buffer.append(UInt8(truncatingIfNeeded: value >> 16))
        buffer.append(UInt8(truncatingIfNeeded: value >> 24))
    }

    @inlinable
    public static func readUInt16(_ bytes: UnsafeRawBufferPointer, at offset: Int) -> UInt16 {
        precondition(offset >= 0 && offset + 2 <= bytes.count, "read past the end")
        return UInt16(littleEndian: bytes.baseAddress.unsafelyUnwrapped.loadUnaligned(fromByteOffset: offset, as: UInt16.self))
    }

    @inlinable
    public static func readUInt32(_ bytes: UnsafeRawBufferPointer, at offset: Int) -> UInt32 {
        precondition(offset >= 0 && offset + 4 <= bytes.count, "read past the end")
        return UInt32(littleEndian: bytes.baseAddress.unsafelyUnwrapped.loadUnaligned(fromByteOffset: offset, as: UInt32.self))
    }

    @inlinable
    public static func readInt64(_ bytes: UnsafeRawBufferPointer, at offset: Int) -> Int64 {
        precondition(offset >= 0 && offset + 8 <= bytes.count, "read past the end")
        return Int64(littleEndian: bytes.baseAddress.unsafelyUnwrapped.loadUnaligned(fromByteOffset: offset, as: Int64.self))
    }
}

/// A frame that could not be decoded.
public struct FrameError: Error, CustomStringConvertible, Equatable {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// Splits a byte stream into frames, keeping a partial frame until the rest arrives.
///
/// Feed it whatever `read` returned; it calls back once per complete frame with a view of the
/// body that is valid only during the callback (no copy on the common path).
public struct FrameDecoder {
    /// The start of a frame whose rest has not arrived.
    private var pending: [UInt8] = []
    /// What a `Hold` kept: the held frame, the ones after it, maybe a partial one.
    private var held: [UInt8] = []

    /// Thrown by an `onFrame` callback to stop before its frame: that frame and everything
    /// after it are kept, and handed out first by the next `feed` (an empty chunk will do).
    public struct Hold: Error {
        public init() {}
    }

    public init() {}

    /// Bytes held back waiting for the rest of a frame, or kept by a `Hold`.
    public var bufferedCount: Int { pending.count + held.count }

    /// Whether a `Hold` kept frames that the next `feed` hands out.
    public var isHolding: Bool { !held.isEmpty }

    /// Decodes all complete frames in `pending + chunk`. Only the bytes of a frame split
    /// across reads are copied; the rest is decoded where it lies.
    public mutating func feed(
        _ chunk: UnsafeRawBufferPointer,
        _ onFrame: (FrameKind, UnsafeRawBufferPointer) throws -> Void
    ) throws {
        if !held.isEmpty {
            // After a hold (rare: a paused producer): what was kept, then the new bytes.
            var bytes = held
            held = []
            bytes.append(contentsOf: chunk)
            try bytes.withUnsafeBytes { try keep(after: Self.decode($0, onFrame), of: $0) }
            return
        }
        var chunk = chunk
        if !pending.isEmpty {
            // Complete the split frame: first its length, then its body.
            if pending.count < 4 {
                let take = min(4 - pending.count, chunk.count)
                pending.append(contentsOf: chunk[0..<take])
                chunk = UnsafeRawBufferPointer(rebasing: chunk[take...])
                if pending.count < 4 { return }
            }
            let length = pending.withUnsafeBytes { Int(FrameCodec.readUInt32($0, at: 0)) }
            guard length >= 1 else { throw FrameError("frame of length 0") }
            guard length <= FrameCodec.maxFrameLength else {
                throw FrameError("frame of \(length) bytes exceeds the limit of \(FrameCodec.maxFrameLength)")
            }
            let take = min(4 + length - pending.count, chunk.count)
            pending.append(contentsOf: chunk[0..<take])
            chunk = UnsafeRawBufferPointer(rebasing: chunk[take...])
            if pending.count < 4 + length { return }
            do {
                try pending.withUnsafeBytes { raw in
                    try onFrame(FrameKind(rawValue: raw[4]), UnsafeRawBufferPointer(rebasing: raw[5..<(4 + length)]))
                }
            } catch is Hold {
                held = pending + Array(chunk)
                pending.removeAll(keepingCapacity: true)
                return
            }
            pending.removeAll(keepingCapacity: true)
        }
        try keep(after: Self.decode(chunk, onFrame), of: chunk)
    }

    /// Keeps what `decode` did not hand out: from a hold on, or a trailing partial frame.
    private mutating func keep(after decoded: (used: Int, held: Bool), of bytes: UnsafeRawBufferPointer) {
        guard decoded.used < bytes.count else { return }
        if decoded.held {
            held = Array(bytes[decoded.used...])
        } else {
            pending.append(contentsOf: bytes[decoded.used...])
        }
    }

    /// Convenience for tests and small inputs.
    public mutating func feed(_ bytes: [UInt8]) throws -> [(FrameKind, [UInt8])] {
        var frames: [(FrameKind, [UInt8])] = []
        try bytes.withUnsafeBytes { raw in
            try feed(raw) { kind, body in frames.append((kind, Array(body))) }
        }
        return frames
    }

    /// Returns how many bytes were handed out (whole frames only), and whether a `Hold`
    /// stopped it.
    private static func decode(
        _ bytes: UnsafeRawBufferPointer,
        _ onFrame: (FrameKind, UnsafeRawBufferPointer) throws -> Void
    ) throws -> (used: Int, held: Bool) {
        var offset = 0
        while bytes.count - offset >= 4 {
            let length = Int(FrameCodec.readUInt32(bytes, at: offset))
            guard length >= 1 else { throw FrameError("frame of length 0 at byte \(offset)") }
            guard length <= FrameCodec.maxFrameLength else {
                throw FrameError("frame of \(length) bytes exceeds the limit of \(FrameCodec.maxFrameLength)")
            }
            guard bytes.count - offset - 4 >= length else { break }
            let kind = FrameKind(rawValue: bytes[offset + 4])
            let body = UnsafeRawBufferPointer(rebasing: bytes[(offset + 5)..<(offset + 4 + length)])
            do {
                try onFrame(kind, body)
            } catch is Hold {
                return (offset, true)
            }
            offset += 4 + length
        }
        return (offset, false)
    }
}
