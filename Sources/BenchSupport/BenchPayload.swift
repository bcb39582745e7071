/// The payload of a `bench` event, shared by the bench module and agent-bench's socketpair
/// baseline so that both send and read the same bytes: JSON of exactly the requested size,
/// `{"seq":0000000042,"pad":"xxx…"}`, whose sequence number sits at a fixed offset so that a
/// receiver reads it without parsing.
public enum BenchPayload {
    // Computed, like `sequenceStart` and `minimumSize`: read for every event, where a lazily
    // initialized global costs a call.
    @inlinable public static var eventType: String { "bench" }
    /// Emitted once after the last `bench` event; payload `{"count":N}`.
    @inlinable public static var endType: String { "bench_end" }

    static let prefix = Array(#"{"seq":"#.utf8)
    /// Where the digits start: `prefix.count`.
    @inlinable public static var sequenceStart: Int { 7 }
    @inlinable public static var sequenceDigits: Int { 10 }
    static let middle = Array(#","pad":""#.utf8)
    static let suffix = Array(#""}"#.utf8)
    /// The smallest payload that holds the sequence number: `prefix`, digits, `middle` and
    /// `suffix`.
    @inlinable public static var minimumSize: Int { 27 }

    /// A payload of `size` bytes (at least ``minimumSize``) with sequence number 0.
    public static func template(size: Int) -> [UInt8] {
        precondition(prefix.count == sequenceStart && prefix.count + sequenceDigits + middle.count + suffix.count == minimumSize)
        let padding = max(0, size - minimumSize)
        return prefix + [UInt8](repeating: UInt8(ascii: "0"), count: sequenceDigits) + middle
            + [UInt8](repeating: UInt8(ascii: "x"), count: padding) + suffix
    }

    /// Writes `sequence` as zero-padded digits into `payload`.
    @inlinable
    public static func setSequence(_ sequence: Int, in payload: inout [UInt8]) {
        var value = sequence
        var index = sequenceStart + sequenceDigits - 1
        while index >= sequenceStart {
            payload[index] = UInt8(ascii: "0") + UInt8(value % 10)
            value /= 10
            index -= 1
        }
    }

    /// The sequence number in `payload`, or nil if it is not a bench payload.
    @inlinable
    public static func sequence(in payload: UnsafeRawBufferPointer) -> Int? {
        guard payload.count >= minimumSize else { return nil }
        var value = 0
        for index in sequenceStart..<(sequenceStart + sequenceDigits) {
            let digit = payload[index] &- UInt8(ascii: "0")
            guard digit < 10 else { return nil }
            value = value * 10 + Int(digit)
        }
        return value
    }
}
