import AgentStore
import JSONSchema

/// A conversation's lines written out for people: as text and as Markdown.
package enum ChatTranscript {
    /// Who wrote a line, as a transcript shows it.
    package static func speaker(_ line: ChatLine) -> String {
        switch line.role {
        case "user": return (line.user ?? "someone") + (line.source == "voice" ? " (voice)" : "")
        case "alert": return "alert from \(line.source)"
        case "tool": return "tool \(line.source)" + (line.user.map { " for \($0)" } ?? "")
        default: return line.source.isEmpty ? "bot" : "bot (\(line.source))"
        }
    }

    /// One line per message: `TIME WHO: TEXT` (a message's own line breaks indented).
    package static func text(_ lines: [ChatLine]) -> String {
        lines.map { line in
            "\(StoreReader.StoredEvent.iso(line.time)) \(speaker(line)): \(line.text.replacingOccurrences(of: "\n", with: "\n    "))\n"
        }.joined()
    }

    /// A Markdown document: a heading, then one list item per message; the text's own Markdown
    /// is escaped so that a message cannot make headings, links or HTML of the transcript.
    /// `truncated`: the conversation has older lines than these (the heading says so).
    package static func markdown(_ lines: [ChatLine], conversation: String, truncated: Bool = false) -> String {
        var document = "# Conversation \(escape(conversation))\n\n"
        if let first = lines.first, let last = lines.last {
            document += "\(truncated ? "The newest \(lines.count) message(s) (there are more)" : "\(lines.count) message(s)"), "
                + "\(StoreReader.StoredEvent.iso(first.time)) to \(StoreReader.StoredEvent.iso(last.time)).\n\n"
        }
        for line in lines {
            let text = escape(line.text).replacingOccurrences(of: "\n", with: "  \n  ")
            document += "- **\(escape(speaker(line)))** (\(StoreReader.StoredEvent.iso(line.time))): \(text)\n"
        }
        return document
    }

    /// Backslash before every character Markdown gives a meaning.
    /// Byte by byte: the characters escaped are ASCII, never part of another's UTF-8 (by
    /// character, a 4 MiB transcript took 1.5 s).
    static func escape(_ text: String) -> String {
        var escaped: [UInt8] = []
        escaped.reserveCapacity(text.utf8.count + text.utf8.count / 8)
        for byte in text.utf8 {
            if byte < 0x80, markdownSpecial[Int(byte)] { escaped.append(UInt8(ascii: "\\")) }
            escaped.append(byte)
        }
        return String(decoding: escaped, as: UTF8.self)
    }

    /// The ASCII characters Markdown gives a meaning, by code.
    private static let markdownSpecial: [Bool] = (0..<128).map { "\\`*_{}[]()#+-.!|<>~".utf8.contains(UInt8($0)) }
}
