/// The payloads of the socketpair baseline: byte for byte the format of the bench module's
/// `bench` events (`{"seq":0000000042,"pad":"xxx…"}`, sequence number at a fixed offset).
enum SocketPayload {
    // Computed, like `sequenceStart` and `minimumSize`: read for every event, where a lazily
    // initialized global costs a call (the same in the bench module's BenchPayload).
    static var eventType: String { "bench" }
    static var endType: String { "bench_end" }

    static let prefix = Array(#"{"seq":"#.utf8)
    /// Where the digits start: `prefix.count`.
    static var sequenceStart: Int { 7 }
    static let sequenceDigits = 10
    static let middle = Array(#","pad":""#.utf8)
    static let suffix = Array(#""}"#.utf8)
    /// `prefix`, digits, `middle` and `suffix`.
    static var minimumSize: Int { 27 }

    static func template(size: Int) -> [UInt8] {
        precondition(prefix.count == sequenceStart && prefix.count + sequenceDigits + middle.count + suffix.count == minimumSize)
        return prefix + [UInt8](repeating: UInt8(ascii: "0"), count: sequenceDigits) + middle
            + [UInt8](repeating: UInt8(ascii: "x"), count: max(0, size - minimumSize)) + suffix
    }

    static func setSequence(_ sequence: Int, in payload: inout [UInt8]) {
        var value = sequence
        var index = sequenceStart + sequenceDigits - 1
        while index >= sequenceStart {
            payload[index] = UInt8(ascii: "0") + UInt8(value % 10)
            value /= 10
            index -= 1
        }
    }

    static func sequence(in payload: UnsafeRawBufferPointer) -> Int? {
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
