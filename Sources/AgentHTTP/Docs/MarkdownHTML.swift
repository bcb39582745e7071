import Foundation

/// Markdown → HTML for the dashboard's `/docs`: the subset the runtime's own documents use
/// (ATX headings, paragraphs, lists, fenced code, pipe tables, block quotes, rules; code spans,
/// emphasis, links, autolinks). Everything the text holds is escaped: raw HTML is shown as text
/// (HTML comments, the documents' markers, are dropped), and a link is kept only when
/// ``link`` accepts its target, so no Markdown makes a script, a style or a frame. Linear in
/// the input, with nesting bounded (``maximumDepth``), so a hostile page costs its length.
struct MarkdownHTML {
    /// A heading of the page, for its table of contents and anchors.
    struct Heading: Equatable {
        var level: Int
        var text: String
        var id: String
    }

    /// The href of a link's target (already accepted and rewritten), or nil to show the link's
    /// text alone.
    var link: (String) -> String?
    /// Lists and quotes nested deeper than this are shown as text.
    static let maximumDepth = 8

    private(set) var headings: [Heading] = []
    private var ids: [String: Int] = [:]

    init(link: @escaping (String) -> String?) { self.link = link }

    /// The page's HTML; ``headings`` holds its headings afterwards.
    mutating func render(_ markdown: String) -> String {
        let lines = markdown.split(separator: "\n", omittingEmptySubsequences: false).map { line in
            line.last == "\r" ? Substring(line.dropLast()) : line
        }
        return blocks(lines[...], depth: 0, tight: false)
    }

    // MARK: Blocks

    private mutating func blocks(_ lines: ArraySlice<Substring>, depth: Int, tight: Bool) -> String {
        var html = ""
        var index = lines.startIndex
        var paragraph: [Substring] = []
        func flush(_ html: inout String, _ renderer: inout MarkdownHTML) {
            guard !paragraph.isEmpty else { return }
            let text = renderer.inline(paragraph.map { $0.trimmingLeadingSpaces }.joined(separator: "\n"))
            html += tight ? text + "\n" : "<p>" + text + "</p>\n"
            paragraph = []
        }
        while index < lines.endIndex {
            let line = lines[index]
            let trimmed = line.trimmingLeadingSpaces
            if trimmed.isEmpty {
                flush(&html, &self)
                index += 1
            } else if trimmed.hasPrefix("<!--") {
                flush(&html, &self)
                while index < lines.endIndex, !lines[index].contains("-->") { index += 1 }
                index += 1
            } else if let fence = Self.fence(trimmed) {
                flush(&html, &self)
                index = code(lines, from: index, fence: fence, into: &html)
            } else if let level = Self.headingLevel(trimmed) {
                flush(&html, &self)
                html += heading(level, trimmed.dropFirst(level))
                index += 1
            } else if Self.isRule(trimmed) {
                flush(&html, &self)
                html += "<hr>\n"
                index += 1
            } else if trimmed.hasPrefix("|"), index + 1 < lines.endIndex, Self.isDelimiterRow(lines[index + 1]) {
                flush(&html, &self)
                index = table(lines, from: index, into: &html)
            } else if trimmed.hasPrefix(">"), depth < Self.maximumDepth {
                flush(&html, &self)
                var quoted: [Substring] = []
                while index < lines.endIndex, lines[index].trimmingLeadingSpaces.hasPrefix(">") {
                    let inner = lines[index].trimmingLeadingSpaces.dropFirst()
                    quoted.append(inner.hasPrefix(" ") ? inner.dropFirst() : inner)
                    index += 1
                }
                html += "<blockquote>\n" + blocks(quoted[...], depth: depth + 1, tight: false) + "</blockquote>\n"
            } else if let marker = Self.listMarker(line), depth < Self.maximumDepth, paragraph.isEmpty || !marker.ordered || marker.start == 1 {
                flush(&html, &self)
                index = list(lines, from: index, depth: depth, into: &html)
            } else {
                paragraph.append(line)
                index += 1
            }
        }
        flush(&html, &self)
        return html
    }

    /// A fenced code block from `start`; the index after its closing fence (or the end).
    private func code(_ lines: ArraySlice<Substring>, from start: Int, fence: (marker: Substring, info: Substring), into html: inout String) -> Int {
        let indent = lines[start].prefix { $0 == " " }.count
        var index = start + 1
        var body: [Substring] = []
        while index < lines.endIndex {
            let trimmed = lines[index].trimmingLeadingSpaces
            if trimmed.hasPrefix(fence.marker), trimmed.allSatisfy({ $0 == fence.marker.first || $0 == " " }) { index += 1; break }
            var line = lines[index]
            var drop = indent
            while drop > 0, line.first == " " { line = line.dropFirst(); drop -= 1 }
            body.append(line)
            index += 1
        }
        let language = fence.info.prefix { $0 != " " }.filter { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" || $0 == "+" }.prefix(20)
        let attribute = language.isEmpty ? "" : " class=\"language-\(language)\""
        html += "<pre><code\(attribute)>" + Self.escape(body.joined(separator: "\n")) + (body.isEmpty ? "" : "\n") + "</code></pre>\n"
        return index
    }

    private mutating func heading(_ level: Int, _ rest: Substring) -> String {
        var text = rest.trimmingLeadingSpaces
        while text.last == "#" || text.last == " " { text = text.dropLast() }
        let plain = Self.plainText(text)
        var id = Self.slug(plain)
        if let seen = ids[id] {
            ids[id] = seen + 1
            id += "-\(seen + 1)"
        } else {
            ids[id] = 0
        }
        headings.append(Heading(level: level, text: plain, id: id))
        return "<h\(level) id=\"\(Self.escape(id))\">" + inline(String(text)) + "</h\(level)>\n"
    }

    private mutating func table(_ lines: ArraySlice<Substring>, from start: Int, into html: inout String) -> Int {
        html += "<table>\n<thead><tr>" + Self.cells(lines[start]).map { "<th>" + inline($0) + "</th>" }.joined() + "</tr></thead>\n<tbody>\n"
        var index = start + 2
        while index < lines.endIndex, lines[index].trimmingLeadingSpaces.hasPrefix("|") {
            html += "<tr>" + Self.cells(lines[index]).map { "<td>" + inline($0) + "</td>" }.joined() + "</tr>\n"
            index += 1
        }
        html += "</tbody>\n</table>\n"
        return index
    }

    /// A list from `start`: its items, each rendered as blocks of its own (lines indented past
    /// the marker belong to the item). Tight (no blank line in it): items without `<p>`.
    private mutating func list(_ lines: ArraySlice<Substring>, from start: Int, depth: Int, into html: inout String) -> Int {
        let first = Self.listMarker(lines[start])!
        var items: [[Substring]] = []
        var index = start
        var blank = false
        var tight = true
        while index < lines.endIndex {
            let line = lines[index]
            if line.trimmingLeadingSpaces.isEmpty {
                blank = true
                index += 1
                continue
            }
            let indent = line.prefix { $0 == " " }.count
            if let marker = Self.listMarker(line), marker.indent == first.indent, marker.ordered == first.ordered {
                if blank { tight = false }
                items.append([line.dropFirst(marker.width)])
            } else if indent > first.indent, !items.isEmpty {
                if blank { tight = false }
                items[items.count - 1].append(line.dropFirst(min(indent, first.width)))
            } else if !blank, !items.isEmpty, Self.listMarker(line) == nil, !line.trimmingLeadingSpaces.hasPrefix("#"), Self.fence(line.trimmingLeadingSpaces) == nil {
                items[items.count - 1].append(line)  // a paragraph's lazy continuation
            } else {
                break
            }
            blank = false
            index += 1
        }
        let tag = first.ordered ? "ol" : "ul"
        let start = first.ordered && first.start != 1 ? " start=\"\(first.start)\"" : ""
        html += "<\(tag)\(start)>\n"
        for item in items {
            html += "<li>" + blocks(item[...], depth: depth + 1, tight: tight) + "</li>\n"
        }
        html += "</\(tag)>\n"
        return index
    }

    // MARK: Block syntax

    static func fence(_ trimmed: Substring) -> (marker: Substring, info: Substring)? {
        for marker in ["```", "~~~"] where trimmed.hasPrefix(marker) {
            let run = trimmed.prefix { $0 == marker.first }
            let info = trimmed.dropFirst(run.count).trimmingLeadingSpaces
            if marker == "```", info.contains("`") { return nil }
            return (run, info)
        }
        return nil
    }

    static func headingLevel(_ trimmed: Substring) -> Int? {
        let level = trimmed.prefix { $0 == "#" }.count
        guard (1...6).contains(level) else { return nil }
        let rest = trimmed.dropFirst(level)
        return rest.isEmpty || rest.first == " " ? level : nil
    }

    static func isRule(_ trimmed: Substring) -> Bool {
        guard let first = trimmed.first, "-*_".contains(first) else { return false }
        return trimmed.filter { $0 == first }.count >= 3 && trimmed.allSatisfy { $0 == first || $0 == " " }
    }

    static func isDelimiterRow(_ line: Substring) -> Bool {
        let trimmed = line.trimmingLeadingSpaces
        return trimmed.hasPrefix("|") && trimmed.contains("-") && trimmed.allSatisfy { "|-: ".contains($0) }
    }

    /// A table row's cells: split at each `|` outside code spans and not escaped.
    static func cells(_ line: Substring) -> [String] {
        var cells: [String] = []
        var current = ""
        var inCode = false
        var escaped = false
        for character in line.trimmingLeadingSpaces.dropFirst() {
            if escaped {
                current.append(character == "|" ? "|" : "\\" + String(character))
                escaped = false
            } else if character == "\\" {
                escaped = true
            } else if character == "`" {
                inCode.toggle()
                current.append(character)
            } else if character == "|", !inCode {
                cells.append(current.trimmingCharacters(in: .whitespaces))
                current = ""
            } else {
                current.append(character)
            }
        }
        let last = current.trimmingCharacters(in: .whitespaces)
        if !last.isEmpty { cells.append(last) }
        return cells
    }

    /// A list item's marker: `- `, `* `, `+ `, `1. `, `1) ` after at most 12 spaces; `width`
    /// is where the item's text starts.
    static func listMarker(_ line: Substring) -> (indent: Int, width: Int, ordered: Bool, start: Int)? {
        let indent = line.prefix { $0 == " " }.count
        guard indent <= 12 else { return nil }
        let rest = line.dropFirst(indent)
        if let first = rest.first, "-*+".contains(first) {
            let after = rest.dropFirst()
            guard after.first == " " else { return nil }
            return (indent, indent + 2, false, 1)
        }
        let digits = rest.prefix { $0.isASCII && $0.isNumber }
        guard (1...9).contains(digits.count) else { return nil }
        let after = rest.dropFirst(digits.count)
        guard let mark = after.first, mark == "." || mark == ")", after.dropFirst().first == " " else { return nil }
        return (indent, indent + digits.count + 2, true, Int(digits) ?? 1)
    }

    // MARK: Text

    /// `&`, `<`, `>`, `"`, `'` as entities: text and attribute values alike.
    static func escape<S: StringProtocol>(_ text: S) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for character in text.unicodeScalars {
            switch character {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            case "\0": out += "\u{FFFD}"
            default: out.unicodeScalars.append(character)
            }
        }
        return out
    }

    /// A heading's text without its Markdown (for anchors and the table of contents).
    static func plainText<S: StringProtocol>(_ text: S) -> String {
        String(text.filter { !"`*".contains($0) })
    }

    /// A heading's anchor as GitHub makes it: lower case, spaces as `-`, other punctuation dropped.
    static func slug(_ text: String) -> String {
        var slug = ""
        for character in text.lowercased() {
            if character.isLetter || character.isNumber || character == "-" || character == "_" {
                slug.append(character)
            } else if character == " " {
                slug.append("-")
            }
        }
        return slug.isEmpty ? "section" : String(slug.prefix(80))
    }
}

extension Substring {
    var trimmingLeadingSpaces: Substring { drop { $0 == " " || $0 == "\t" } }
}
