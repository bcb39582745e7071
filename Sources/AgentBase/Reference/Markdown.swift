import Foundation

/// Plain Markdown for the references generated from the code (docs/reference): tables whose
/// cells are escaped, code spans, and the notice each generated file starts with. Nothing in
/// it depends on the time or the machine, so that one commit always generates the same text.
public enum Markdown {
    /// The command that writes every reference; named in each file and in every staleness test.
    public static let regenerateCommand = "agent-control docs --write docs/reference"

    /// The first lines of a generated reference: its title and where it comes from.
    public static func header(_ title: String, from source: String) -> String {
        """
        <!-- Generated from \(source) by `\(regenerateCommand)`; do not edit by hand. -->
        # \(title)

        """
    }

    /// Text for one table cell: pipes escaped (GitHub's tables want that inside code spans too),
    /// line breaks as spaces.
    public static func cell(_ text: String) -> String {
        text.replacingOccurrences(of: "|", with: "\\|")
            .split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }.joined(separator: " ")
    }

    /// A code span that holds any text (a longer run of backticks around text that has some).
    public static func code(_ text: String) -> String {
        guard !text.isEmpty else { return "" }
        var longest = 0, run = 0
        for character in text {
            run = character == "`" ? run + 1 : 0
            longest = max(longest, run)
        }
        let fence = String(repeating: "`", count: longest + 1)
        let padded = text.hasPrefix("`") || text.hasSuffix("`") ? " \(text) " : text
        return fence + padded + fence
    }

    /// A table: a header row, its rule, and the rows (each cell escaped with ``cell(_:)`` by
    /// the caller where it holds free text).
    public static func table(_ header: [String], _ rows: [[String]]) -> String {
        var lines = ["| " + header.joined(separator: " | ") + " |", "|" + header.map { _ in " --- |" }.joined()]
        for row in rows { lines.append("| " + row.joined(separator: " | ") + " |") }
        return lines.joined(separator: "\n") + "\n"
    }
}
