import Foundation

/// A fenced block of a Markdown file with what the document says of it: the marker in an
/// HTML comment right above it (`<!-- example: run -->`; blank lines between allowed), and the
/// last line of text above it ("… prints:").
package struct MarkdownBlock: CustomStringConvertible {
    package var file: String
    /// The 1-based line of its opening fence.
    package var line: Int
    package var language: String
    package var lines: [String]
    /// What follows `example:` in the comment above it (`run`, `prints`, `partial`, `invalid`,
    /// `not settings`), lower-cased; nil without one.
    package var marker: String?
    /// The last non-blank line above it that is not a comment.
    package var lead: String

    package var text: String { lines.joined(separator: "\n") }
    package var description: String { "\((file as NSString).lastPathComponent):\(line)" }

    /// Whether the marker is `word` or begins with it (`partial: the schedule's task is elsewhere`).
    package func marked(_ word: String) -> Bool {
        guard let marker else { return false }
        return marker == word || marker.hasPrefix(word + " ") || marker.hasPrefix(word + ":") || marker.hasPrefix(word + " (")
    }
}

extension MarkdownExamples {
    /// The markers an example may carry, each with what it means (the test's failures name them).
    package static let markers = [
        "run": "a shell block run whole (bash -e) against the test's agent, in its folder",
        "prints": "the output of the runnable block just above, compared loosely (numbers, times and ids as placeholders; … for anything)",
        "partial": "a settings fragment that is deliberately incomplete: not validated",
        "invalid": "a settings fragment that must be refused by validate-settings",
        "not settings": "a ```json block that is not settings (an answer, a payload) although it looks like them",
    ]

    /// Every fenced block of the file at `path`.
    package static func fencedBlocks(inFile path: String) throws -> [MarkdownBlock] {
        fencedBlocks(in: try String(contentsOfFile: path, encoding: .utf8), file: path)
    }

    package static func fencedBlocks(in text: String, file: String) -> [MarkdownBlock] {
        var blocks: [MarkdownBlock] = []
        var open: MarkdownBlock?
        var fence = ""
        var marker: String?
        var lead = ""
        for (index, line) in text.components(separatedBy: "\n").enumerated() {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if var block = open {
                if trimmed.hasPrefix(fence), trimmed.allSatisfy({ $0 == fence.first }) {
                    blocks.append(block)
                    open = nil
                    marker = nil
                } else {
                    block.lines.append(line)
                    open = block
                }
            } else if trimmed.hasPrefix("```") || trimmed.hasPrefix("~~~") {
                fence = String(trimmed.prefix { $0 == trimmed.first })
                let language = trimmed.dropFirst(fence.count).trimmingCharacters(in: .whitespaces).lowercased()
                open = MarkdownBlock(file: file, line: index + 1, language: language, lines: [], marker: marker, lead: lead)
            } else if trimmed.hasPrefix("<!--"), let range = trimmed.range(of: "example:") {
                marker = trimmed[range.upperBound...].replacingOccurrences(of: "-->", with: "").trimmingCharacters(in: .whitespaces).lowercased()
            } else if !trimmed.isEmpty {
                marker = nil
                lead = trimmed
            }
        }
        return blocks
    }

    /// Whether `output` has the shape of `expected`: each non-blank line of `expected`, with
    /// numbers, times, UUIDs and hex ids as placeholders and `…` (or `...`) standing for
    /// anything, matches a line of `output`, in order.
    package static func looselyMatches(_ output: String, expected: String) -> (matches: Bool, missing: String?) {
        let actual = output.components(separatedBy: "\n").map(normalized)
        var position = 0
        for line in expected.components(separatedBy: "\n") where !line.trimmingCharacters(in: .whitespaces).isEmpty {
            let pattern = normalized(line).components(separatedBy: "…").map(NSRegularExpression.escapedPattern(for:)).joined(separator: ".*")
            guard let regex = try? NSRegularExpression(pattern: "^" + pattern + "$") else { return (false, line) }
            guard let found = actual[position...].firstIndex(where: { regex.firstMatch(in: $0, range: NSRange($0.startIndex..., in: $0)) != nil }) else {
                return (false, line)
            }
            position = found + 1
        }
        return (true, nil)
    }

    /// A line with what changes from run to run replaced: times, UUIDs, hex ids, numbers;
    /// spaces collapsed (tables are aligned to their widest cell).
    static func normalized(_ line: String) -> String {
        var text = line.replacingOccurrences(of: "...", with: "…")
        let replacements = [
            (#"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?"#, "TIME"),
            (#"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"#, "UUID"),
            (#"\b(?=[0-9a-f]*[a-f])(?=[0-9a-f]*[0-9])[0-9a-f]{7,}\b"#, "HEX"),
            (#"\d+(\.\d+)?"#, "N"),
            (#"\s+"#, " "),
        ]
        for (pattern, replacement) in replacements {
            text = text.replacingOccurrences(of: pattern, with: replacement, options: .regularExpression)
        }
        return text.trimmingCharacters(in: .whitespaces)
    }
}
