/// Text that others wrote (a logic adapter's or a language model's answer, a process's name)
/// as a terminal may show it: the characters a terminal obeys or that show another text than
/// the one there — C0 and C1 controls (an escape sequence retitles, recolours or clears the
/// reader's terminal), DEL, the bidirectional controls (an override shows the rest of the line
/// reversed) — are written as `\u{…}`. Line breaks and tabs stay, when asked.
public enum TerminalText {
    /// Whether a terminal would obey `scalar` or show the text around it otherwise than it is.
    public static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) || [0x200E, 0x200F, 0x061C].contains(scalar.value)
            || (0x202A...0x202E).contains(scalar.value) || (0x2066...0x2069).contains(scalar.value)
    }

    /// `text` with every control written as `\u{…}`; `\n` and `\t` kept when `keepingLines`.
    public static func shown(_ text: String, keepingLines: Bool = true) -> String {
        shown(text) { keepingLines && ($0 == "\n" || $0 == "\t") }
    }

    /// `text` on one line: every control written as `\u{…}` but the tab (a log file's line,
    /// where a stack trace's indentation is kept).
    public static func shownOnOneLine(_ text: String) -> String {
        shown(text) { $0 == "\t" }
    }

    private static func shown(_ text: String, keeping: (Unicode.Scalar) -> Bool) -> String {
        // Every control is a byte below 0x20, DEL, or starts with 0xC2 (C1), 0xD8 (U+061C) or
        // 0xE2 (the bidirectional marks): text without them is returned after one byte scan.
        guard text.utf8.contains(where: { $0 < 0x20 || $0 == 0x7F || $0 == 0xC2 || $0 == 0xD8 || $0 == 0xE2 }),
              text.unicodeScalars.contains(where: { isControl($0) && !keeping($0) }) else { return text }
        var shown = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            if isControl(scalar), !keeping(scalar) {
                shown.append(contentsOf: "\\u{\(String(scalar.value, radix: 16, uppercase: true))}".unicodeScalars)
            } else {
                shown.append(scalar)
            }
        }
        return String(shown)
    }
}
