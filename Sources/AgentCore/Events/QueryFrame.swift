/// The bodies of the `query` and `queryResult` frames between a worker and the supervisor (and
/// of `chatTool` and `chatToolResult`, which are laid out the same way).
///
/// Each query carries an id (a `UInt64` the worker hands out, little-endian) that its answer
/// carries back: a worker's handlers query at once, and each waits for its own answer.
public enum QueryFrame {
    /// `query`: id (8), the request's JSON (`{"sql", "params"}`); `chatTool` has the same layout.
    public static func appendRequest(id: UInt64, json: [UInt8], to buffer: FrameBuffer, kind: FrameKind = .query) {
        FrameCodec.appendHeader(kind, bodyLength: 8 + json.count, to: buffer)
        buffer.append(8) { $0.storeBytes(of: id.littleEndian, as: UInt64.self) }
        buffer.append(contentsOf: json)
    }

    /// A `query` body: its id and the request's JSON (pointing into the frame).
    public static func parseRequest(_ body: UnsafeRawBufferPointer) -> (id: UInt64, json: UnsafeRawBufferPointer)? {
        guard body.count >= 8 else { return nil }
        return (UInt64(bitPattern: FrameCodec.readInt64(body, at: 0)), UnsafeRawBufferPointer(rebasing: body[8...]))
    }

    /// `queryResult`: the query's id (8), status (1: 0 the rows as JSON, 1 an error message),
    /// the bytes.
    public static func result(id: UInt64, ok: Bool, _ bytes: [UInt8]) -> [UInt8] {
        withUnsafeBytes(of: id.littleEndian) { Array($0) } + [ok ? 0 : 1] + bytes
    }

    public static func parseResult(_ body: UnsafeRawBufferPointer) -> (id: UInt64, status: UInt8, bytes: [UInt8])? {
        guard body.count >= 9 else { return nil }
        return (UInt64(bitPattern: FrameCodec.readInt64(body, at: 0)), body[8], Array(body[9...]))
    }
}
