/// Accumulates JSON text; kept separate so recursion does not copy the output buffer.
struct JSONWriter {
    let pretty: Bool
    let sortedKeys: Bool
    var output = ""

    init(pretty: Bool, sortedKeys: Bool) {
        self.pretty = pretty
        self.sortedKeys = sortedKeys
    }

    mutating func write(_ value: JSONValue, indent: Int) {
        switch value {
        case .null: output += "null"
        case .bool(let b): output += b ? "true" : "false"
        case .number(let n): output += n.description
        case .string(let s): JSONWriter.appendQuoted(s, to: &output)
        case .array(let elements):
            guard !elements.isEmpty else {
                output += "[]"
                return
            }
            output += "["
            for (i, element) in elements.enumerated() {
                if i > 0 { output += "," }
                newline(indent + 1)
                write(element, indent: indent + 1)
            }
            newline(indent)
            output += "]"
        case .object(let object):
            guard !object.isEmpty else {
                output += "{}"
                return
            }
            output += "{"
            var entries = object.entries
            if sortedKeys {
                // Compare by Unicode scalars so the order does not depend on locale or normalization.
                entries.sort { $0.key.unicodeScalars.lexicographicallyPrecedes($1.key.unicodeScalars) }
            }
            for (i, entry) in entries.enumerated() {
                if i > 0 { output += "," }
                newline(indent + 1)
                JSONWriter.appendQuoted(entry.key, to: &output)
                output += pretty ? ": " : ":"
                write(entry.value, indent: indent + 1)
            }
            newline(indent)
            output += "}"
        }
    }

    private mutating func newline(_ indent: Int) {
        guard pretty else { return }
        output += "\n"
        output += String(repeating: "  ", count: indent)
    }

    /// Appends `string` as a quoted JSON string literal.
    static func appendQuoted(_ string: String, to output: inout String) {
        output += "\""
        var string = string
        let needsEscaping = string.withUTF8(containsEscape)
        guard needsEscaping else {
            output += string
            output += "\""
            return
        }
        string.withUTF8 { bytes in
            var start = 0
            for (index, byte) in bytes.enumerated() where needsEscape(byte) {
                // Escaped bytes are ASCII, so the runs between them are whole UTF-8 sequences.
                if index > start { output += String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self) }
                output += escape(byte)
                start = index + 1
            }
            if start < bytes.count { output += String(decoding: UnsafeBufferPointer(rebasing: bytes[start...]), as: UTF8.self) }
        }
        output += "\""
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

    private static func escape(_ byte: UInt8) -> String {
        switch byte {
        case UInt8(ascii: "\""): return "\\\""
        case UInt8(ascii: "\\"): return "\\\\"
        case UInt8(ascii: "\n"): return "\\n"
        case UInt8(ascii: "\r"): return "\\r"
        case UInt8(ascii: "\t"): return "\\t"
        case 0x08: return "\\b"
        case 0x0C: return "\\f"
        default:
            let hex = String(byte, radix: 16, uppercase: true)
            return "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
        }
    }

    /// Adds the length of `value`'s compact text to `total`; false once it passes `limit`
    /// (what is left is not walked).
    static func measure(_ value: JSONValue, total: inout Int, limit: Int) -> Bool {
        switch value {
        case .null: total += 4
        case .bool(let b): total += b ? 4 : 5
        case .number(let n): total += n.description.utf8.count
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
            return bytes.reduce(0) { extra, byte in
                guard needsEscape(byte) else { return extra }
                return extra + (escape(byte).utf8.count - 1)
            }
        }
        return total <= limit
    }
}
