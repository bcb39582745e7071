/// RFC 3986 `uri`/`uri-reference`, RFC 3987 `iri`/`iri-reference` (the same grammar with
/// non-ASCII characters allowed), RFC 6570 `uri-template`, and RFC 6901/draft relative JSON
/// pointers.
enum URIFormats {
    static func isURI(_ text: String) -> Bool { check(text, relative: false, international: false) }
    static func isURIReference(_ text: String) -> Bool { check(text, relative: true, international: false) }
    static func isIRI(_ text: String) -> Bool { check(text, relative: false, international: true) }
    static func isIRIReference(_ text: String) -> Bool { check(text, relative: true, international: true) }

    private static let unreserved = Set("-._~".unicodeScalars)
    private static let subDelims = Set("!$&'()*+,;=".unicodeScalars)

    private static func check(_ text: String, relative: Bool, international: Bool) -> Bool {
        let s = Array(text.unicodeScalars)
        var i = 0
        // Scheme: ALPHA *(ALPHA / DIGIT / "+" / "-" / ".") ":" — required for absolute URIs.
        var hasScheme = false
        if let colon = s.firstIndex(of: ":"), colon > 0, isAlpha(s[0]),
            s[..<colon].allSatisfy({ isAlpha($0) || isDigit($0) || $0 == "+" || $0 == "-" || $0 == "." }),
            !s[..<colon].contains(where: { $0 == "/" || $0 == "?" || $0 == "#" })
        {
            hasScheme = true
            i = colon + 1
        }
        if !hasScheme {
            guard relative else { return false }
            // In a relative reference the first segment must not contain ":".
            let firstSegmentEnd = s.firstIndex(where: { $0 == "/" || $0 == "?" || $0 == "#" }) ?? s.count
            if s[..<firstSegmentEnd].contains(":") { return false }
        }
        if i + 1 < s.count, s[i] == "/", s[i + 1] == "/" {
            i += 2
            let end = s[i...].firstIndex(where: { $0 == "/" || $0 == "?" || $0 == "#" }) ?? s.count
            guard isAuthority(Array(s[i..<end]), international: international) else { return false }
            i = end
        }
        while i < s.count, s[i] != "?", s[i] != "#" {
            if s[i] == "/" {
                i += 1
            } else if !isPathCharacter(s, &i, international: international) {
                return false
            }
        }
        if i < s.count, s[i] == "?" {
            i += 1
            while i < s.count, s[i] != "#" {
                if s[i] == "/" || s[i] == "?" || (international && isPrivateUse(s[i])) {
                    i += 1
                } else if !isPathCharacter(s, &i, international: international) {
                    return false
                }
            }
        }
        if i < s.count, s[i] == "#" {
            i += 1
            while i < s.count {
                if s[i] == "/" || s[i] == "?" {
                    i += 1
                } else if !isPathCharacter(s, &i, international: international) {
                    return false
                }
            }
        }
        return true
    }

    /// Consumes one `pchar` (advancing `i`); returns false when the character is not allowed.
    private static func isPathCharacter(_ s: [Unicode.Scalar], _ i: inout Int, international: Bool) -> Bool {
        let c = s[i]
        if c == "%" {
            guard i + 2 < s.count, s[i + 1].properties.isASCIIHexDigit, s[i + 2].properties.isASCIIHexDigit else { return false }
            i += 3
            return true
        }
        if isUnreserved(c) || subDelims.contains(c) || c == ":" || c == "@" || (international && isUCSChar(c)) {
            i += 1
            return true
        }
        return false
    }

    private static func isAuthority(_ a: [Unicode.Scalar], international: Bool) -> Bool {
        var host = a[...]
        if let at = a.firstIndex(of: "@") {
            var j = 0
            while j < at {
                if a[j] == ":" {
                    j += 1
                } else {
                    var k = j
                    guard isPathCharacter(a, &k, international: international), a[j] != "@" else { return false }
                    j = k
                }
            }
            host = a[(at + 1)...]
        }
        if host.first == "[" {
            guard let close = host.firstIndex(of: "]") else { return false }
            let literal = String(String.UnicodeScalarView(host[(host.startIndex + 1)..<close]))
            let validLiteral = literal.lowercased().hasPrefix("v") ? isIPvFuture(literal) : NetworkFormats.isIPv6(literal)
            guard validLiteral else { return false }
            return isPort(host[(close + 1)...])
        }
        let colon = host.lastIndex(of: ":")
        let name = colon.map { host[..<$0] } ?? host
        for c in name where !(isUnreserved(c) || subDelims.contains(c) || c == "%" || (international && isUCSChar(c))) {
            return false
        }
        return colon.map { isPort(host[$0...]) } ?? true
    }

    private static func isPort(_ text: ArraySlice<Unicode.Scalar>) -> Bool {
        guard let first = text.first else { return true }
        return first == ":" && text.dropFirst().allSatisfy(isDigit)
    }

    private static func isIPvFuture(_ text: String) -> Bool {
        let s = Array(text.unicodeScalars.dropFirst())
        guard let dot = s.firstIndex(of: "."), dot > 0, s[..<dot].allSatisfy({ $0.properties.isASCIIHexDigit }) else { return false }
        let rest = s[(dot + 1)...]
        return !rest.isEmpty && rest.allSatisfy { isUnreserved($0) || subDelims.contains($0) || $0 == ":" }
    }

    private static func isUnreserved(_ c: Unicode.Scalar) -> Bool {
        isAlpha(c) || isDigit(c) || unreserved.contains(c)
    }

    private static func isAlpha(_ c: Unicode.Scalar) -> Bool {
        ("a"..."z").contains(c) || ("A"..."Z").contains(c)
    }

    private static func isDigit(_ c: Unicode.Scalar) -> Bool {
        ("0"..."9").contains(c)
    }

    private static func isUCSChar(_ c: Unicode.Scalar) -> Bool {
        let v = c.value
        guard v >= 0xA0 else { return false }
        if (0xD800...0xDFFF).contains(v) || (0xFDD0...0xFDEF).contains(v) { return false }
        if (0xE000...0xF8FF).contains(v) { return false }
        return v & 0xFFFE != 0xFFFE
    }

    private static func isPrivateUse(_ c: Unicode.Scalar) -> Bool {
        (0xE000...0xF8FF).contains(c.value) || (0xF0000...0x10FFFD).contains(c.value)
    }

    /// RFC 6570: literals and `{expression}`s with an optional operator and varspecs.
    static func isURITemplate(_ text: String) -> Bool {
        let scalars = Array(text.unicodeScalars)
        var i = 0
        while i < scalars.count {
            let c = scalars[i]
            if c == "{" {
                guard let close = scalars[i...].firstIndex(of: "}") else { return false }
                guard isTemplateExpression(Array(scalars[(i + 1)..<close])) else { return false }
                i = close + 1
                continue
            }
            if c == "%" {
                guard i + 2 < scalars.count, scalars[i + 1].properties.isASCIIHexDigit, scalars[i + 2].properties.isASCIIHexDigit else {
                    return false
                }
                i += 3
                continue
            }
            if c.value <= 0x20 || c.value == 0x7F || "\"<>\\^`{|}".unicodeScalars.contains(c) { return false }
            i += 1
        }
        return true
    }

    private static func isTemplateExpression(_ expression: [Unicode.Scalar]) -> Bool {
        var body = expression[...]
        if let first = body.first, "+#./;?&=,!@|".unicodeScalars.contains(first) {
            body = body.dropFirst()
        }
        guard !body.isEmpty else { return false }
        for spec in body.split(separator: ",", omittingEmptySubsequences: false) {
            var name = spec
            if let colon = spec.firstIndex(of: ":") {
                let length = spec[(colon + 1)...]
                guard (1...4).contains(length.count), length.allSatisfy({ ("0"..."9").contains($0) }), length.first != "0" else {
                    return false
                }
                name = spec[..<colon]
            } else if spec.last == "*" {
                name = spec.dropLast()
            }
            guard isVariableName(Array(name)) else { return false }
        }
        return true
    }

    /// `varchar *( ["."] varchar )`, where a varchar is ALPHA, DIGIT, "_" or a %-escape.
    private static func isVariableName(_ name: [Unicode.Scalar]) -> Bool {
        guard !name.isEmpty, name.first != ".", name.last != "." else { return false }
        var i = 0
        var previousDot = false
        while i < name.count {
            let c = name[i]
            if c == "." {
                guard !previousDot else { return false }
                previousDot = true
                i += 1
                continue
            }
            previousDot = false
            if c == "%" {
                guard i + 2 < name.count, name[i + 1].properties.isASCIIHexDigit, name[i + 2].properties.isASCIIHexDigit else {
                    return false
                }
                i += 3
                continue
            }
            guard isAlpha(c) || isDigit(c) || c == "_" else { return false }
            i += 1
        }
        return true
    }

    /// RFC 6901: empty, or `/`-prefixed tokens where `~` is followed by `0` or `1`.
    static func isJSONPointer(_ text: String) -> Bool {
        JSONPointer(text) != nil
    }

    /// Relative JSON pointer: a non-negative integer (no leading zeros), optionally an index
    /// adjustment, then `#` or a JSON pointer.
    static func isRelativeJSONPointer(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        var i = 0
        while i < bytes.count, bytes[i] >= 48, bytes[i] <= 57 { i += 1 }
        guard i > 0, !(bytes[0] == UInt8(ascii: "0") && i > 1) else { return false }
        if i < bytes.count, bytes[i] == UInt8(ascii: "+") || bytes[i] == UInt8(ascii: "-") {
            let start = i + 1
            var j = start
            while j < bytes.count, bytes[j] >= 48, bytes[j] <= 57 { j += 1 }
            guard j > start, !(bytes[start] == UInt8(ascii: "0") && j - start > 1) else { return false }
            i = j
        }
        let rest = String(decoding: bytes[i...], as: UTF8.self)
        return rest == "#" || isJSONPointer(rest)
    }
}
