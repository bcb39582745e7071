/// The payloads of the socketpair baseline: byte for byte the format of the bench module's
/// `bench` events (`{"seq":0000000042,"pad":"xxx…"}`, sequence number at a fixed offset).
enum SocketPayload {
    static let eventType = "bench"
    static let endType = "bench_end"

    static let prefix = Array(#"{"seq":"#.utf8)
    static let sequenceDigits = 10
    static let middle = Array(#","pad":""#.utf8)
    static let suffix = Array(#""}"#.utf8)
    static let minimumSize = prefix.count + sequenceDigits + middle.count + suffix.count

    static func template(size: Int) -> [UInt8] {
        prefix + [UInt8](repeating: UInt8(ascii: "0"), count: sequenceDigits) + middle
            + [UInt8](repeating: UInt8(ascii: "x"), count: max(0, size - minimumSize)) + suffix
    }

    static func setSequence(_ sequence: Int, in payload: inout [UInt8]) {
        var value = sequence
        var index = prefix.count + sequenceDigits - 1
        while index >= prefix.count {
            payload[index] = UInt8(ascii: "0") + UInt8(value % 10)
            value /= 10
            index -= 1
        }
    }

    static func sequence(in payload: UnsafeRawBufferPointer) -> Int? {
        guard payload.count >= minimumSize else { return nil }
        var value = 0
        for index in prefix.count..<(prefix.count + sequenceDigits) {
            let digit = payload[index] &- UInt8(ascii: "0")
            guard digit < 10 else { return nil }
            value = value * 10 + Int(digit)
        }
        return value
    }
}
