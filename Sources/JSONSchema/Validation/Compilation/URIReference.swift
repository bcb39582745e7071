/// Minimal RFC 3986 URI reference handling: splitting into components and resolving a
/// reference against a base (section 5.2), which is all that `$id`/`$ref` resolution needs.
struct URIReference: Equatable {
    var scheme: String?
    var authority: String?
    var path: String
    var query: String?
    var fragment: String?

    init(scheme: String?, authority: String?, path: String, query: String?, fragment: String?) {
        self.scheme = scheme
        self.authority = authority
        self.path = path
        self.query = query
        self.fragment = fragment
    }

    /// Splits text into components following the regular expression of RFC 3986 appendix B.
    init(_ text: String) {
        var rest = Substring(text)
        if let hash = rest.firstIndex(of: "#") {
            fragment = String(rest[rest.index(after: hash)...])
            rest = rest[..<hash]
        }
        if let question = rest.firstIndex(of: "?") {
            query = String(rest[rest.index(after: question)...])
            rest = rest[..<question]
        }
        if let colon = rest.firstIndex(of: ":"), URIReference.isScheme(rest[..<colon]) {
            scheme = String(rest[..<colon])
            rest = rest[rest.index(after: colon)...]
        }
        if rest.hasPrefix("//") {
            let afterSlashes = rest.index(rest.startIndex, offsetBy: 2)
            let end = rest[afterSlashes...].firstIndex(of: "/") ?? rest.endIndex
            authority = String(rest[afterSlashes..<end])
            rest = rest[end...]
        }
        path = String(rest)
    }

    private static func isScheme(_ text: Substring) -> Bool {
        guard let first = text.utf8.first, isAlpha(first) else { return false }
        return text.utf8.allSatisfy { b in
            isAlpha(b) || (b >= UInt8(ascii: "0") && b <= UInt8(ascii: "9")) || b == UInt8(ascii: "+") || b == UInt8(ascii: "-")
                || b == UInt8(ascii: ".")
        }
    }

    private static func isAlpha(_ b: UInt8) -> Bool {
        (b | 0x20) >= UInt8(ascii: "a") && (b | 0x20) <= UInt8(ascii: "z")
    }

    /// The URI text.
    var text: String {
        var result = ""
        if let scheme { result += scheme + ":" }
        if let authority { result += "//" + authority }
        result += path
        if let query { result += "?" + query }
        if let fragment { result += "#" + fragment }
        return result
    }

    /// This reference resolved against `base` (RFC 3986 section 5.2.2).
    func resolved(against base: URIReference) -> URIReference {
        if scheme != nil {
            return URIReference(scheme: scheme, authority: authority, path: URIReference.removeDotSegments(path), query: query, fragment: fragment)
        }
        if authority != nil {
            return URIReference(scheme: base.scheme, authority: authority, path: URIReference.removeDotSegments(path), query: query, fragment: fragment)
        }
        if path.isEmpty {
            return URIReference(scheme: base.scheme, authority: base.authority, path: base.path, query: query ?? base.query, fragment: fragment)
        }
        let merged: String
        if path.hasPrefix("/") {
            merged = path
        } else if base.authority != nil && base.path.isEmpty {
            merged = "/" + path
        } else if let slash = base.path.lastIndex(of: "/") {
            merged = String(base.path[...slash]) + path
        } else {
            merged = path
        }
        return URIReference(scheme: base.scheme, authority: base.authority, path: URIReference.removeDotSegments(merged), query: query, fragment: fragment)
    }

    /// Resolves `reference` against the absolute URI `base` and returns the text.
    static func resolve(_ reference: String, against base: String) -> String {
        URIReference(reference).resolved(against: URIReference(base)).text
    }

    /// Removes `.` and `..` segments (RFC 3986 section 5.2.4).
    static func removeDotSegments(_ path: String) -> String {
        guard path.contains(".") else { return path }
        var output: [Substring] = []
        let absolute = path.hasPrefix("/")
        var segments = path.split(separator: "/", omittingEmptySubsequences: false)
        if absolute { segments.removeFirst() }
        var endsWithSlash = false
        for (i, segment) in segments.enumerated() {
            let last = i == segments.count - 1
            switch segment {
            case ".":
                endsWithSlash = last
            case "..":
                if !output.isEmpty { output.removeLast() }
                endsWithSlash = last
            default:
                output.append(segment)
                endsWithSlash = false
            }
        }
        var result = (absolute ? "/" : "") + output.joined(separator: "/")
        if endsWithSlash && !result.hasSuffix("/") { result += "/" }
        return result
    }

    /// The text with any fragment removed, and an empty trailing `#` dropped.
    static func withoutFragment(_ text: String) -> String {
        guard let hash = text.firstIndex(of: "#") else { return text }
        return String(text[..<hash])
    }

    /// Decodes `%XX` escapes (as UTF-8); malformed escapes are kept literally.
    static func percentDecoded(_ text: String) -> String {
        guard text.contains("%") else { return text }
        var bytes: [UInt8] = []
        let utf8 = Array(text.utf8)
        var i = 0
        while i < utf8.count {
            if utf8[i] == UInt8(ascii: "%"), i + 2 < utf8.count, let high = hexValue(utf8[i + 1]), let low = hexValue(utf8[i + 2]) {
                bytes.append(high << 4 | low)
                i += 3
            } else {
                bytes.append(utf8[i])
                i += 1
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}
