import Foundation

/// One inline link or image of a Markdown file: `[text](target)` or `![alt](target)`.
package struct MarkdownLink: Equatable {
    /// The link's text (an image's alt text), line breaks kept.
    package var text: String
    /// The target as written, without a title: a URL, a path, `path#anchor` or `#anchor`.
    package var target: String
    /// The 1-based line the link starts on.
    package var line: Int

    package init(text: String, target: String, line: Int) {
        self.text = text
        self.target = target
        self.line = line
    }
}

/// The links and heading anchors of Markdown text, as a forge (GitHub, Gitea, GitLab) reads
/// them: nothing inside a fenced block or a code span is a link or a heading.
package enum MarkdownLinks {
    /// The inline links of `text` outside fenced blocks and code spans (a link's text may run
    /// over a line break).
    package static func links(in text: String) -> [MarkdownLink] {
        let prose = withoutCode(text)
        var found: [MarkdownLink] = []
        for match in prose.matches(of: /\[([^\]]*)\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/) {
            let line = prose[..<match.range.lowerBound].reduce(1) { $1 == "\n" ? $0 + 1 : $0 }
            found.append(MarkdownLink(text: String(match.output.1), target: String(match.output.2), line: line))
        }
        return found
    }

    /// Whether `target` leaves the repository: a URL with a scheme (`https:`, `mailto:`).
    package static func isExternal(_ target: String) -> Bool {
        target.firstMatch(of: /^[A-Za-z][A-Za-z0-9+.\-]*:/) != nil
    }

    /// The anchors of the headings of `text` (`## The store` → `the-store`); a repeated
    /// heading's anchor gets `-1`, `-2`… as on a forge.
    package static func anchors(in text: String) -> Set<String> {
        var seen: [String: Int] = [:]
        var anchors: Set<String> = []
        // A heading's code spans are part of its text (`## `agent-control`` → `agent-control`).
        for line in withoutFences(text).split(separator: "\n", omittingEmptySubsequences: false) {
            guard let heading = line.firstMatch(of: /^#{1,6}\s+(.*?)\s*#*\s*$/) else { continue }
            let slug = anchor(of: String(heading.output.1))
            let count = seen[slug, default: 0]
            seen[slug] = count + 1
            anchors.insert(count == 0 ? slug : "\(slug)-\(count)")
        }
        return anchors
    }

    /// A heading's anchor: its text without link targets and markup, lowercased, with every
    /// character but letters, digits, `_`, `-` and spaces dropped and spaces made `-`.
    package static func anchor(of heading: String) -> String {
        let text = heading.replacing(/\[([^\]]*)\]\([^)]*\)/) { String($0.output.1) }
        return String(text.lowercased().compactMap { character -> Character? in
            if character == " " { return "-" }
            return character.isLetter || character.isNumber || character == "_" || character == "-" ? character : nil
        })
    }

    /// `text` with the lines of fenced blocks emptied and code spans removed (line count kept).
    static func withoutCode(_ text: String) -> String {
        withoutFences(text).replacing(/`+[^`]*`+/, with: "")
    }

    /// `text` with the lines of fenced blocks emptied (line count kept).
    static func withoutFences(_ text: String) -> String {
        var fence: String?
        var lines: [String] = []
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if let open = fence {
                if trimmed.hasPrefix(open) { fence = nil }
                lines.append("")
            } else if let marker = trimmed.firstMatch(of: /^(`{3,}|~{3,})/) {
                fence = String(marker.output.1)
                lines.append("")
            } else {
                lines.append(String(line))
            }
        }
        return lines.joined(separator: "\n")
    }
}
