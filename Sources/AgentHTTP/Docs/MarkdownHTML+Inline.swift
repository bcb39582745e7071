import Foundation

extension MarkdownHTML {
    /// The text of a paragraph, heading or cell: code spans, `**strong**`, `*emphasis*` and
    /// `_emphasis_`, `[links](target)`, `<https://autolinks>`, backslash escapes; the rest
    /// escaped. A closer searched for and not found is remembered (none after that point
    /// either), so that no input makes the scan quadratic.
    func inline(_ text: String) -> String {
        var scanner = InlineScanner(bytes: Array(text.utf8), link: link)
        return scanner.render(0..<scanner.bytes.count, depth: 0)
    }
}

/// One paragraph's inline scan over its UTF-8 bytes (every marker is ASCII, so a cut at a
/// marker is a cut between characters).
struct InlineScanner {
    let bytes: [UInt8]
    let link: (String) -> String?
    /// Per closer searched for: the position from which it was not found, and the last one
    /// found (searched from, found at): a search from between the two finds the same.
    private var notFound: [String: Int] = [:]
    private var found: [String: (from: Int, at: Int)] = [:]

    init(bytes: [UInt8], link: @escaping (String) -> String?) {
        self.bytes = bytes
        self.link = link
    }

    mutating func render(_ range: Range<Int>, depth: Int) -> String {
        var out = ""
        var index = range.lowerBound
        var plain = index
        func text(_ upTo: Int) {
            if plain < upTo { out += MarkdownHTML.escape(String(decoding: bytes[plain..<upTo], as: UTF8.self)) }
        }
        while index < range.upperBound {
            let byte = bytes[index]
            var replaced: (html: String, end: Int)?
            switch byte {
            case UInt8(ascii: "\\") where index + 1 < range.upperBound && Self.isPunctuation(bytes[index + 1]):
                replaced = (MarkdownHTML.escape(String(UnicodeScalar(bytes[index + 1]))), index + 2)
            case UInt8(ascii: "`"):
                replaced = codeSpan(at: index, in: range)
            case UInt8(ascii: "*"), UInt8(ascii: "_"):
                replaced = emphasis(at: index, in: range, depth: depth)
            case UInt8(ascii: "["), UInt8(ascii: "!"):
                replaced = linked(at: index, in: range, depth: depth)
            case UInt8(ascii: "<"):
                replaced = autolink(at: index, in: range)
            default:
                break
            }
            if let replaced {
                text(index)
                out += replaced.html
                index = replaced.end
                plain = index
            } else {
                index += 1
            }
        }
        text(range.upperBound)
        return out
    }

    /// The first position ≥ `from` (before `end`) where `matches` holds (which depends on the
    /// position alone), remembering a miss and the last find.
    mutating func find(_ key: String, from: Int, end: Int, _ matches: (Int) -> Bool) -> Int? {
        let cacheKey = key + "@\(end)"
        if let missed = notFound[cacheKey], missed <= from { return nil }
        if let last = found[cacheKey], last.from <= from, from <= last.at { return last.at }
        var index = from
        while index < end {
            if matches(index) {
                found[cacheKey] = (from, index)
                return index
            }
            index += 1
        }
        notFound[cacheKey] = min(from, notFound[cacheKey] ?? from)
        return nil
    }

    /// How many `byte`s start at `index`, counted up to `limit` (a run is never counted whole:
    /// a line of a million `*` would make that quadratic).
    static func run(of byte: UInt8, in bytes: [UInt8], at index: Int, end: Int, limit: Int) -> Int {
        var count = 0
        while count < limit, index + count < end, bytes[index + count] == byte { count += 1 }
        return count
    }

    mutating func codeSpan(at index: Int, in range: Range<Int>) -> (html: String, end: Int)? {
        let width = Self.run(of: UInt8(ascii: "`"), in: bytes, at: index, end: range.upperBound, limit: 17)
        let start = index + width
        guard width <= 16 else { return ("`" + String(repeating: "`", count: width - 1), start) }
        let bytes = bytes
        let close = find("`\(width)", from: start, end: range.upperBound) { at in
            bytes[at] == UInt8(ascii: "`") && (at == 0 || bytes[at - 1] != UInt8(ascii: "`"))
                && Self.run(of: UInt8(ascii: "`"), in: bytes, at: at, end: range.upperBound, limit: width + 1) == width
        }
        guard let close else { return (String(repeating: "`", count: width), start) }
        var content = String(decoding: bytes[start..<close], as: UTF8.self).replacingOccurrences(of: "\n", with: " ")
        if content.count > 1, content.hasPrefix(" "), content.hasSuffix(" ") { content = String(content.dropFirst().dropLast()) }
        return ("<code>" + MarkdownHTML.escape(content) + "</code>", close + width)
    }

    mutating func emphasis(at index: Int, in range: Range<Int>, depth: Int) -> (html: String, end: Int)? {
        let byte = bytes[index]
        let width = Self.run(of: byte, in: bytes, at: index, end: range.upperBound, limit: 2)
        let start = index + width
        // `_` inside a word (snake_case) is text; an opener is followed by a non-space.
        if byte == UInt8(ascii: "_"), index > 0, Self.isWord(bytes[index - 1]) { return nil }
        guard depth < MarkdownHTML.maximumDepth, start < range.upperBound, !Self.isSpace(bytes[start]) else { return nil }
        let bytes = bytes
        let close = find("\(byte)\(width)", from: start + 1, end: range.upperBound) { at in
            guard at + width <= range.upperBound, (0..<width).allSatisfy({ bytes[at + $0] == byte }), !Self.isSpace(bytes[at - 1]) else { return false }
            let after = at + width
            if after < range.upperBound, bytes[after] == byte { return false }
            return byte != UInt8(ascii: "_") || after >= range.upperBound || !Self.isWord(bytes[after])
        }
        guard let close else { return nil }
        let tag = width == 2 ? "strong" : "em"
        return ("<\(tag)>" + render(start..<close, depth: depth + 1) + "</\(tag)>", close + width)
    }

    /// `[text](target)` (a link when ``link`` accepts the target, else its text) and
    /// `![alt](image)` (never loaded: shown as a link to it, or its text).
    mutating func linked(at index: Int, in range: Range<Int>, depth: Int) -> (html: String, end: Int)? {
        let image = bytes[index] == UInt8(ascii: "!")
        let open = image ? index + 1 : index
        guard open < range.upperBound, bytes[open] == UInt8(ascii: "["), depth < MarkdownHTML.maximumDepth else { return nil }
        let bytes = bytes
        guard let close = find("]", from: open + 1, end: range.upperBound, { bytes[$0] == UInt8(ascii: "]") }),
              close + 1 < range.upperBound, bytes[close + 1] == UInt8(ascii: "(") else { return nil }
        guard let end = find(")", from: close + 2, end: range.upperBound, { bytes[$0] == UInt8(ascii: ")") }) else { return nil }
        var target = String(decoding: bytes[(close + 2)..<end], as: UTF8.self).trimmingCharacters(in: .whitespaces)
        if let space = target.firstIndex(of: " ") { target = String(target[..<space]) }  // a title: dropped
        if target.hasPrefix("<"), target.hasSuffix(">") { target = String(target.dropFirst().dropLast()) }
        let label = render((open + 1)..<close, depth: depth + 1)
        guard let href = link(target) else { return (label, end + 1) }
        return ("<a href=\"" + MarkdownHTML.escape(href) + "\">" + (image ? "image: " : "") + label + "</a>", end + 1)
    }

    mutating func autolink(at index: Int, in range: Range<Int>) -> (html: String, end: Int)? {
        let bytes = bytes
        guard let end = find(">", from: index + 1, end: range.upperBound, { bytes[$0] == UInt8(ascii: ">") || Self.isSpace(bytes[$0]) }),
              bytes[end] == UInt8(ascii: ">") else { return nil }
        let target = String(decoding: bytes[(index + 1)..<end], as: UTF8.self)
        guard target.hasPrefix("https://") || target.hasPrefix("http://"), let href = link(target) else { return nil }
        return ("<a href=\"" + MarkdownHTML.escape(href) + "\">" + MarkdownHTML.escape(target) + "</a>", end + 1)
    }

    static func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x0A || byte == 0x09 }
    static func isWord(_ byte: UInt8) -> Bool { byte >= 0x80 || (byte >= 0x30 && byte <= 0x39) || (byte | 0x20 >= 0x61 && byte | 0x20 <= 0x7A) }
    static func isPunctuation(_ byte: UInt8) -> Bool { byte < 0x80 && !isWord(byte) && !isSpace(byte) && byte > 0x20 }
}
