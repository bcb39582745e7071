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
        var needsEscaping = false
        for byte in string.utf8 where byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") {
            needsEscaping = true
            break
        }
        guard needsEscaping else {
            output += string
            output += "\""
            return
        }
        for scalar in string.unicodeScalars {
            switch scalar {
            case "\"": output += "\\\""
            case "\\": output += "\\\\"
            case "\n": output += "\\n"
            case "\r": output += "\\r"
            case "\t": output += "\\t"
            case "\u{08}": output += "\\b"
            case "\u{0C}": output += "\\f"
            default:
                if scalar.value < 0x20 {
                    let hex = String(scalar.value, radix: 16, uppercase: true)
                    output += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                } else {
                    output.unicodeScalars.append(scalar)
                }
            }
        }
        output += "\""
    }
}
