import JSONSchema

/// Writes a snapshot's answer as compact JSON bytes, the same text as
/// `JSONValue.serialized()` (members in document order, the same escapes), straight into a
/// byte array: the answer is written once per snapshot and sent to every request that waited
/// for it, and bytes appended to an array cost far less than a `String` grown piece by piece.
package enum SnapshotJSONWriter {
    /// `value` as compact JSON.
    package static func bytes(_ value: JSONValue) -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(8 << 10)
        write(value, into: &output)
        return output
    }

    package static func write(_ value: JSONValue, into output: inout [UInt8]) {
        switch value {
        case .null: append("null", to: &output)
        case .bool(let flag): append(flag ? "true" : "false", to: &output)
        case .number(let number): append(number.description, to: &output)
        case .string(let text): appendQuoted(text, to: &output)
        case .array(let elements):
            output.append(UInt8(ascii: "["))
            for (index, element) in elements.enumerated() {
                if index > 0 { output.append(UInt8(ascii: ",")) }
                write(element, into: &output)
            }
            output.append(UInt8(ascii: "]"))
        case .object(let object):
            output.append(UInt8(ascii: "{"))
            var first = true
            for (key, member) in object {
                if !first { output.append(UInt8(ascii: ",")) }
                first = false
                appendQuoted(key, to: &output)
                output.append(UInt8(ascii: ":"))
                write(member, into: &output)
            }
            output.append(UInt8(ascii: "}"))
        }
    }

    private static func append(_ text: String, to output: inout [UInt8]) {
        var text = text
        text.withUTF8 { output.append(contentsOf: $0) }
    }

    private static let hexDigits = Array("0123456789ABCDEF".utf8)

    /// `text` as a quoted JSON string literal, escaped as `JSONValue.serialized()` escapes it.
    package static func appendQuoted(_ text: String, to output: inout [UInt8]) {
        output.append(UInt8(ascii: "\""))
        var text = text
        text.withUTF8 { bytes in
            var start = 0
            for index in bytes.indices {
                let byte = bytes[index]
                guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else { continue }
                output.append(contentsOf: bytes[start..<index])
                start = index + 1
                switch byte {
                case UInt8(ascii: "\""): output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\"")])
                case UInt8(ascii: "\\"): output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\")])
                case UInt8(ascii: "\n"): output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
                case UInt8(ascii: "\r"): output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
                case UInt8(ascii: "\t"): output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
                case 0x08: output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "b")])
                case 0x0C: output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "f")])
                default:
                    output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"),
                                               hexDigits[Int(byte >> 4)], hexDigits[Int(byte & 0xF)]])
                }
            }
            output.append(contentsOf: bytes[start...])
        }
        output.append(UInt8(ascii: "\""))
    }
}
