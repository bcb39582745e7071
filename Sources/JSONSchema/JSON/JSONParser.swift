/// Strict recursive-descent RFC 8259 parser over a UTF-8 buffer.
///
/// Positions are tracked as byte offsets only; line and column are computed when an error is
/// reported, so the success path pays nothing for them. The same goes for the JSON pointer of
/// the value at fault: each container adds its member's token as the error passes through.
///
/// A key repeated in one object is refused: RFC 8259 leaves its meaning open, and a reader
/// where the last one wins lets `{"command": "status", "command": "stop"}` pass a check of
/// the first while running the second. Looking for it costs nothing more: storing a member
/// looked the key up already.
struct JSONParser {
    static let maxDepth = 512

    private let bytes: UnsafeBufferPointer<UInt8>
    private var pos = 0
    private var depth = 0

    init(_ bytes: UnsafeBufferPointer<UInt8>) {
        self.bytes = bytes
    }

    mutating func parseDocument() throws(JSONParseError) -> JSONValue {
        if bytes.count >= 3, bytes[0] == 0xEF, bytes[1] == 0xBB, bytes[2] == 0xBF {
            throw error("a byte order mark is not allowed at the start of JSON text")
        }
        skipWhitespace()
        guard pos < bytes.count else { throw error("expected a JSON value, found end of input") }
        let value = try parseValue()
        skipWhitespace()
        if pos < bytes.count {
            throw error("unexpected \(describeCurrent()) after the JSON value")
        }
        return value
    }

    // MARK: - Values

    private mutating func parseValue() throws(JSONParseError) -> JSONValue {
        guard pos < bytes.count else { throw error("expected a JSON value, found end of input") }
        switch bytes[pos] {
        case UInt8(ascii: "{"): return try parseObject()
        case UInt8(ascii: "["): return try parseArray()
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"): try expectLiteral("true"); return .bool(true)
        case UInt8(ascii: "f"): try expectLiteral("false"); return .bool(false)
        case UInt8(ascii: "n"): try expectLiteral("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try parseNumber())
        case UInt8(ascii: "/"): throw error("comments are not allowed in JSON")
        default: throw error("expected a JSON value, found \(describeCurrent())")
        }
    }

    private mutating func enterContainer() throws(JSONParseError) {
        depth += 1
        if depth > JSONParser.maxDepth {
            throw error("maximum nesting depth of \(JSONParser.maxDepth) exceeded")
        }
    }

    private mutating func parseObject() throws(JSONParseError) -> JSONValue {
        try enterContainer()
        pos += 1
        var object = JSONObject()
        skipWhitespace()
        if pos < bytes.count, bytes[pos] == UInt8(ascii: "}") {
            pos += 1
            depth -= 1
            return .object(object)
        }
        while true {
            skipWhitespace()
            guard pos < bytes.count, bytes[pos] == UInt8(ascii: "\"") else {
                if pos < bytes.count, bytes[pos] == UInt8(ascii: "}") {
                    throw error("trailing comma before '}' is not allowed")
                }
                if pos < bytes.count, bytes[pos] == UInt8(ascii: "/") {
                    throw error("comments are not allowed in JSON")
                }
                throw error("expected a string for the object key, found \(describeCurrent())")
            }
            let keyStart = pos
            let key = try parseString()
            if object.position(of: key) != nil {
                throw error("the key \"\(key)\" appears twice in one object; keep one of them", at: keyStart).within(key)
            }
            skipWhitespace()
            guard pos < bytes.count, bytes[pos] == UInt8(ascii: ":") else {
                throw error("expected ':' after object key, found \(describeCurrent())")
            }
            pos += 1
            skipWhitespace()
            let value: JSONValue
            do { value = try parseValue() } catch { throw error.within(key) }
            object.appendNew(key, value)
            skipWhitespace()
            guard pos < bytes.count else {
                throw error("expected ',' or '}' after object member, found end of input")
            }
            switch bytes[pos] {
            case UInt8(ascii: ","):
                pos += 1
            case UInt8(ascii: "}"):
                pos += 1
                depth -= 1
                return .object(object)
            case UInt8(ascii: "/"):
                throw error("comments are not allowed in JSON")
            default:
                throw error("expected ',' or '}' after object member, found \(describeCurrent())")
            }
        }
    }

    private mutating func parseArray() throws(JSONParseError) -> JSONValue {
        try enterContainer()
        pos += 1
        var elements: [JSONValue] = []
        skipWhitespace()
        if pos < bytes.count, bytes[pos] == UInt8(ascii: "]") {
            pos += 1
            depth -= 1
            return .array(elements)
        }
        while true {
            skipWhitespace()
            if pos < bytes.count, bytes[pos] == UInt8(ascii: "]") {
                throw error("trailing comma before ']' is not allowed")
            }
            do { elements.append(try parseValue()) } catch { throw error.within(String(elements.count)) }
            skipWhitespace()
            guard pos < bytes.count else {
                throw error("expected ',' or ']' after array element, found end of input")
            }
            switch bytes[pos] {
            case UInt8(ascii: ","):
                pos += 1
            case UInt8(ascii: "]"):
                pos += 1
                depth -= 1
                return .array(elements)
            case UInt8(ascii: "/"):
                throw error("comments are not allowed in JSON")
            default:
                throw error("expected ',' or ']' after array element, found \(describeCurrent())")
            }
        }
    }

    private mutating func expectLiteral(_ literal: StaticString) throws(JSONParseError) {
        let start = pos
        let count = literal.utf8CodeUnitCount
        let matches = literal.withUTF8Buffer { expected in
            guard bytes.count - pos >= count else { return false }
            for i in 0..<count where bytes[pos + i] != expected[i] { return false }
            return true
        }
        guard matches else {
            throw error("invalid literal, expected '\(literal)'", at: start)
        }
        pos += count
    }

    // MARK: - Numbers

    private mutating func parseNumber() throws(JSONParseError) -> JSONNumber {
        let start = pos
        var negative = false
        if bytes[pos] == UInt8(ascii: "-") {
            negative = true
            pos += 1
        }
        guard pos < bytes.count, isDigit(bytes[pos]) else {
            throw error("expected a digit after '-', found \(describeCurrent())")
        }
        var simple = true
        var magnitude = 0
        var digitCount = 0
        if bytes[pos] == UInt8(ascii: "0") {
            pos += 1
            if pos < bytes.count, isDigit(bytes[pos]) {
                throw error("leading zeros are not allowed in numbers", at: pos - 1)
            }
        } else {
            while pos < bytes.count, isDigit(bytes[pos]) {
                if digitCount < 18 { magnitude = magnitude * 10 + Int(bytes[pos] &- UInt8(ascii: "0")) }
                digitCount += 1
                pos += 1
            }
        }
        if pos < bytes.count, bytes[pos] == UInt8(ascii: ".") {
            simple = false
            pos += 1
            guard pos < bytes.count, isDigit(bytes[pos]) else {
                throw error("expected a digit after '.', found \(describeCurrent())")
            }
            while pos < bytes.count, isDigit(bytes[pos]) { pos += 1 }
        }
        if pos < bytes.count, bytes[pos] | 0x20 == UInt8(ascii: "e") {
            simple = false
            pos += 1
            if pos < bytes.count, bytes[pos] == UInt8(ascii: "+") || bytes[pos] == UInt8(ascii: "-") { pos += 1 }
            guard pos < bytes.count, isDigit(bytes[pos]) else {
                throw error("expected a digit in the exponent, found \(describeCurrent())")
            }
            while pos < bytes.count, isDigit(bytes[pos]) { pos += 1 }
        }
        // "-0" takes the decimal path so that its text survives a round trip.
        if simple && digitCount <= 18 && !(negative && magnitude == 0) {
            return JSONNumber(negative ? -magnitude : magnitude)
        }
        let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<pos]), as: UTF8.self)
        return JSONNumber(validatedText: text)
    }

    @inline(__always)
    private func isDigit(_ byte: UInt8) -> Bool {
        byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
    }

    // MARK: - Strings

    private mutating func parseString() throws(JSONParseError) -> String {
        let open = pos
        pos += 1
        let start = pos
        // Fast path: no escapes, so the bytes can be validated and used as they are.
        while pos < bytes.count {
            let byte = bytes[pos]
            if byte == UInt8(ascii: "\"") {
                let slice = UnsafeBufferPointer(rebasing: bytes[start..<pos])
                pos += 1
                return try makeString(slice, at: start)
            }
            if byte == UInt8(ascii: "\\") { break }
            if byte < 0x20 { throw controlCharacterError(byte) }
            pos += 1
        }
        guard pos < bytes.count else { throw error("unterminated string", at: open) }
        var buffer: [UInt8] = Array(UnsafeBufferPointer(rebasing: bytes[start..<pos]))
        while pos < bytes.count {
            let byte = bytes[pos]
            switch byte {
            case UInt8(ascii: "\""):
                pos += 1
                return try buffer.withUnsafeBufferPointer { (b) throws(JSONParseError) in try makeString(b, at: start) }
            case UInt8(ascii: "\\"):
                try parseEscape(into: &buffer)
            case 0..<0x20:
                throw controlCharacterError(byte)
            default:
                buffer.append(byte)
                pos += 1
            }
        }
        throw error("unterminated string", at: open)
    }

    private func makeString(_ slice: UnsafeBufferPointer<UInt8>, at start: Int) throws(JSONParseError) -> String {
        guard let string = String(validating: slice, as: UTF8.self) else {
            var offset = start
            var checker = Unicode.UTF8.ForwardParser()
            var iterator = slice.makeIterator()
            scan: while true {
                switch checker.parseScalar(from: &iterator) {
                case .valid(let s): offset += s.count
                case .error: break scan
                case .emptyInput: break scan
                }
            }
            throw error("invalid UTF-8 in string", at: offset)
        }
        return string
    }

    private func controlCharacterError(_ byte: UInt8) -> JSONParseError {
        let hex = String(byte, radix: 16, uppercase: true)
        return error("control character U+\(String(repeating: "0", count: 4 - hex.count))\(hex) must be escaped in strings")
    }

    private mutating func parseEscape(into buffer: inout [UInt8]) throws(JSONParseError) {
        let escapeStart = pos
        pos += 1
        guard pos < bytes.count else { throw error("unterminated string", at: escapeStart) }
        let byte = bytes[pos]
        pos += 1
        switch byte {
        case UInt8(ascii: "\""): buffer.append(UInt8(ascii: "\""))
        case UInt8(ascii: "\\"): buffer.append(UInt8(ascii: "\\"))
        case UInt8(ascii: "/"): buffer.append(UInt8(ascii: "/"))
        case UInt8(ascii: "b"): buffer.append(0x08)
        case UInt8(ascii: "f"): buffer.append(0x0C)
        case UInt8(ascii: "n"): buffer.append(0x0A)
        case UInt8(ascii: "r"): buffer.append(0x0D)
        case UInt8(ascii: "t"): buffer.append(0x09)
        case UInt8(ascii: "u"):
            var code = try parseHex4(escapeStart)
            if (0xD800...0xDBFF).contains(code) {
                guard pos + 1 < bytes.count, bytes[pos] == UInt8(ascii: "\\"), bytes[pos + 1] == UInt8(ascii: "u") else {
                    throw error("unpaired high surrogate \\u\(hex4(code)) (a low surrogate \\uDC00-\\uDFFF must follow)", at: escapeStart)
                }
                let lowStart = pos
                pos += 2
                let low = try parseHex4(lowStart)
                guard (0xDC00...0xDFFF).contains(low) else {
                    throw error("expected a low surrogate after \\u\(hex4(code)), found \\u\(hex4(low))", at: lowStart)
                }
                code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
            } else if (0xDC00...0xDFFF).contains(code) {
                throw error("unpaired low surrogate \\u\(hex4(code))", at: escapeStart)
            }
            // Every remaining code is a valid scalar: surrogates were handled above.
            let scalar = Unicode.Scalar(code)!
            buffer.append(contentsOf: UTF8.encode(scalar)!)
        default:
            pos -= 1
            throw error("invalid escape sequence '\\\(describeByte(byte, quoted: false))' in string", at: escapeStart)
        }
    }

    private mutating func parseHex4(_ escapeStart: Int) throws(JSONParseError) -> UInt32 {
        var value: UInt32 = 0
        for _ in 0..<4 {
            guard pos < bytes.count, let digit = hexValue(bytes[pos]) else {
                throw error("invalid \\u escape: expected 4 hex digits", at: escapeStart)
            }
            value = value << 4 | digit
            pos += 1
        }
        return value
    }

    private func hexValue(_ byte: UInt8) -> UInt32? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return UInt32(byte - UInt8(ascii: "0"))
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return UInt32(byte - UInt8(ascii: "a") + 10)
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return UInt32(byte - UInt8(ascii: "A") + 10)
        default: return nil
        }
    }

    private func hex4(_ value: UInt32) -> String {
        let hex = String(value, radix: 16, uppercase: true)
        return String(repeating: "0", count: max(0, 4 - hex.count)) + hex
    }

    // MARK: - Whitespace and errors

    @inline(__always)
    private mutating func skipWhitespace() {
        while pos < bytes.count {
            switch bytes[pos] {
            case 0x20, 0x0A, 0x0D, 0x09: pos += 1
            default: return
            }
        }
    }

    private func describeCurrent() -> String {
        guard pos < bytes.count else { return "end of input" }
        return describeByte(bytes[pos], quoted: true)
    }

    /// Shows the character at `pos` (decoding a multi-byte scalar when possible).
    private func describeByte(_ byte: UInt8, quoted: Bool) -> String {
        var text: String
        if byte >= 0x20 && byte < 0x7F {
            text = String(UnicodeScalar(byte))
        } else if byte < 0x80 {
            return "U+\(hex4(UInt32(byte)))"
        } else {
            var parser = Unicode.UTF8.ForwardParser()
            var iterator = UnsafeBufferPointer(rebasing: bytes[pos...]).makeIterator()
            if case .valid(let encoded) = parser.parseScalar(from: &iterator) {
                text = String(Unicode.UTF8.decode(encoded))
            } else {
                return "invalid UTF-8 byte 0x\(String(byte, radix: 16, uppercase: true))"
            }
        }
        if quoted { text = "'\(text)'" }
        return text
    }

    private func error(_ message: String) -> JSONParseError {
        error(message, at: pos)
    }

    private func error(_ message: String, at offset: Int) -> JSONParseError {
        var line = 1
        var column = 1
        var i = 0
        let end = min(offset, bytes.count)
        while i < end {
            let byte = bytes[i]
            if byte == 0x0A {
                line += 1
                column = 1
            } else if byte & 0xC0 != 0x80 {
                column += 1
            }
            i += 1
        }
        return JSONParseError(line: line, column: column, offset: offset, message: message)
    }
}
