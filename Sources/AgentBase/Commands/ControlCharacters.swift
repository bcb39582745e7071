/// Control characters in a request's free text. Names, filters and prefixes take none (a
/// filter for one can match nothing a user typed, and the answer would carry it to a terminal);
/// a message's text keeps line breaks and tabs, which a message has, and refuses the other
/// control characters: NUL cuts a C string short, ESC and the C1 controls (U+009B, a CSI) can
/// drive the terminal that shows the conversation.
public enum ControlCharacters {
    /// The schema `pattern` of a string without control characters (Unicode's Cc: C0, DEL, C1).
    public static let nonePattern = "^[^\\u0000-\\u001F\\u007F-\\u009F]*$"

    /// Why `text` cannot be a message's text: its first control character other than a line
    /// break (`\n`, `\r`) or a tab, with where it is; nil when it has none. Linear in UTF-8
    /// bytes (a message may be a megabyte, too long for a schema `pattern`'s budget).
    public static func problem(inMessage text: String) -> String? {
        var previous: UInt8 = 0
        var found: Int?
        for (offset, byte) in text.utf8.enumerated() {
            // C1 controls are U+0080…U+009F: 0xC2 0x80…0x9F in UTF-8.
            if (byte < 0x20 && byte != 0x09 && byte != 0x0A && byte != 0x0D) || byte == 0x7F || (previous == 0xC2 && (0x80...0x9F).contains(byte)) {
                found = previous == 0xC2 && byte >= 0x80 ? offset - 1 : offset
                break
            }
            previous = byte
        }
        guard let found else { return nil }
        let index = text.utf8.index(text.utf8.startIndex, offsetBy: found)
        let scalar = text.unicodeScalars[index]
        let position = text.unicodeScalars.distance(from: text.unicodeScalars.startIndex, to: index) + 1
        let code = String(scalar.value, radix: 16, uppercase: true)
        return "expected text without control characters (line breaks and tabs are fine); found U+\(String(repeating: "0", count: max(0, 4 - code.count)) + code) at character \(position)"
    }
}
