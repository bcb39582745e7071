/// Accumulates JSON text as UTF-8 bytes: a byte appended to an array costs a store, where a
/// `String` grown piece by piece paid for its capacity and flags at every comma (a run's input
/// of 500,000 numbers took 35 ms to write that way). Kept separate so recursion does not copy
/// the output buffer.
struct JSONWriter {
    let pretty: Bool
    let sortedKeys: Bool
    var output: [UInt8] = []

    init(pretty: Bool, sortedKeys: Bool, capacity: Int = 64) {
        self.pretty = pretty
        self.sortedKeys = sortedKeys
        output.reserveCapacity(capacity)
    }

    mutating func write(_ value: JSONValue, indent: Int) {
        switch value {
        case .null: Self.append("null", to: &output)
        case .bool(let b): Self.append(b ? "true" : "false", to: &output)
        case .number(let n): Self.append(n, to: &output)
        case .string(let s): Self.appendQuoted(s, to: &output)
        case .array(let elements):
            guard !elements.isEmpty else { return Self.append("[]", to: &output) }
            output.append(UInt8(ascii: "["))
            for (i, element) in elements.enumerated() {
                if i > 0 { output.append(UInt8(ascii: ",")) }
                newline(indent + 1)
                write(element, indent: indent + 1)
            }
            newline(indent)
            output.append(UInt8(ascii: "]"))
        case .object(let object):
            guard !object.isEmpty else { return Self.append("{}", to: &output) }
            output.append(UInt8(ascii: "{"))
            var entries = object.entries
            if sortedKeys {
                // Compare by Unicode scalars so the order does not depend on locale or normalization.
                entries.sort { $0.key.unicodeScalars.lexicographicallyPrecedes($1.key.unicodeScalars) }
            }
            for (i, entry) in entries.enumerated() {
                if i > 0 { output.append(UInt8(ascii: ",")) }
                newline(indent + 1)
                Self.appendQuoted(entry.key, to: &output)
                output.append(UInt8(ascii: ":"))
                if pretty { output.append(UInt8(ascii: " ")) }
                write(entry.value, indent: indent + 1)
            }
            newline(indent)
            output.append(UInt8(ascii: "}"))
        }
    }

    private mutating func newline(_ indent: Int) {
        guard pretty else { return }
        output.append(UInt8(ascii: "\n"))
        output.append(contentsOf: repeatElement(UInt8(ascii: " "), count: 2 * indent))
    }

    private static func append(_ text: StaticString, to output: inout [UInt8]) {
        output.append(contentsOf: UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    /// A number's exact text; an integer's digits without a `String` between.
    private static func append(_ number: JSONNumber, to output: inout [UInt8]) {
        guard case .int(let value) = number.storage else {
            var text = number.description
            return text.withUTF8 { output.append(contentsOf: $0) }
        }
        if (0...9).contains(value) { return output.append(UInt8(ascii: "0") + UInt8(value)) }
        if value < 0 { output.append(UInt8(ascii: "-")) }
        // The digits from the last, into a buffer on the stack, then appended in order.
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)
        withUnsafeMutableBytes(of: &digits) { buffer in
            var magnitude = value.magnitude
            var start = buffer.count
            repeat {
                start -= 1
                buffer[start] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
            } while magnitude > 0
            output.append(contentsOf: UnsafeRawBufferPointer(rebasing: buffer[start...]))
        }
    }

    /// Appends `string` as a quoted JSON string literal.
    static func appendQuoted(_ string: String, to output: inout [UInt8]) {
        output.append(UInt8(ascii: "\""))
        var string = string
        string.withUTF8 { bytes in
            guard containsEscape(bytes) else { return output.append(contentsOf: bytes) }
            var start = 0
            for (index, byte) in bytes.enumerated() where needsEscape(byte) {
                output.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start..<index]))
                appendEscape(byte, to: &output)
                start = index + 1
            }
            output.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start...]))
        }
        output.append(UInt8(ascii: "\""))
    }

    /// Appends `string` as a quoted JSON string literal to text.
    static func appendQuoted(_ string: String, to output: inout String) {
        var bytes: [UInt8] = []
        appendQuoted(string, to: &bytes)
        output += String(decoding: bytes, as: UTF8.self)
    }

    /// Whether any byte needs an escape, eight at a time (a run's input of a megabyte is
    /// scanned on the loop; a byte at a time took ~1.3 ms): a word has a byte below 0x20 when
    /// `(x - 0x20…) & ~x` has a high bit set, a byte equal to `c` when `x ^ c…` has a zero byte.
    private static func containsEscape(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let base = bytes.baseAddress else { return false }
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highs = ones &* 0x80
        var index = 0
        while index + 8 <= bytes.count {
            let word = UnsafeRawPointer(base).loadUnaligned(fromByteOffset: index, as: UInt64.self)
            let quote = word ^ (ones &* UInt64(UInt8(ascii: "\"")))
            let backslash = word ^ (ones &* UInt64(UInt8(ascii: "\\")))
            let control = (word &- ones &* 0x20) & ~word
            let zeros = ((quote &- ones) & ~quote) | ((backslash &- ones) & ~backslash)
            if (control | zeros) & highs != 0 { return true }
            index += 8
        }
        while index < bytes.count {
            if needsEscape(bytes[index]) { return true }
            index += 1
        }
        return false
    }

    @inline(__always)
    private static func needsEscape(_ byte: UInt8) -> Bool {
        byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\")
    }

    private static let hexDigits = Array("0123456789ABCDEF".utf8)

    private static func appendEscape(_ byte: UInt8, to output: inout [UInt8]) {
        output.append(UInt8(ascii: "\\"))
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"): output.append(byte)
        case UInt8(ascii: "\n"): output.append(UInt8(ascii: "n"))
        case UInt8(ascii: "\r"): output.append(UInt8(ascii: "r"))
        case UInt8(ascii: "\t"): output.append(UInt8(ascii: "t"))
        case 0x08: output.append(UInt8(ascii: "b"))
        case 0x0C: output.append(UInt8(ascii: "f"))
        default: output.append(contentsOf: [UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"), hexDigits[Int(byte >> 4)], hexDigits[Int(byte & 0xF)]])
        }
    }

    /// The bytes `appendEscape` writes for `byte`, less the byte itself.
    private static func escapeGrowth(_ byte: UInt8) -> Int {
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "\n"), UInt8(ascii: "\r"), UInt8(ascii: "\t"), 0x08, 0x0C: 1
        default: 5
        }
    }

    /// Adds the length of `value`'s compact text to `total`; false once it passes `limit`
    /// (what is left is not walked).
    static func measure(_ value: JSONValue, total: inout Int, limit: Int) -> Bool {
        switch value {
        case .null: total += 4
        case .bool(let b): total += b ? 4 : 5
        case .number(let n):
            if case .int(let v) = n.storage {
                var magnitude = v.magnitude
                total += v < 0 ? 2 : 1
                while magnitude >= 10 { total += 1; magnitude /= 10 }
            } else {
                total += n.description.utf8.count
            }
        case .string(let s): return measureQuoted(s, total: &total, limit: limit)
        case .array(let elements):
            total += 2 + max(0, elements.count - 1)
            for element in elements {
                guard total <= limit, measure(element, total: &total, limit: limit) else { return false }
            }
        case .object(let object):
            total += 2 + max(0, object.count - 1)
            for (key, item) in object {
                total += 1
                guard total <= limit, measureQuoted(key, total: &total, limit: limit), measure(item, total: &total, limit: limit) else { return false }
            }
        }
        return total <= limit
    }

    /// A quoted string's length: its bytes read only while they fit.
    private static func measureQuoted(_ string: String, total: inout Int, limit: Int) -> Bool {
        total += string.utf8.count + 2
        guard total <= limit else { return false }
        var string = string
        total += string.withUTF8 { bytes in
            guard containsEscape(bytes) else { return 0 }
            return bytes.reduce(0) { extra, byte in needsEscape(byte) ? extra + escapeGrowth(byte) : extra }
        }
        return total <= limit
    }
}
