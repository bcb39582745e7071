import Foundation

/// The names a settings file gives to processes and to modules in `enabled_modules`: plain
/// names, never paths. A process name ends up in logs, the store, `ps` titles and commands
/// (`agent-control process stop NAME`); a module name becomes `modules/<name>/` and
/// `lib<name>.so`, so `..` would reach outside the agent's `modules/` folder.
///
/// Allowed: 1 to 200 bytes of letters, digits, `_`, `-` and `.`, not starting with `-` (it
/// would read as an option) and not `.` or `..`. No `/`, spaces, NUL or control characters.
/// Composed (Unicode NFC): Swift compares strings by canonical equivalence, so "\u{212B}" and
/// "\u{C5}" (both "Å") were two processes to JSON but one name to the supervisor, and a reload
/// of such a pair killed it.
public enum PlainName {
    /// The longest name, in UTF-8 bytes.
    public static let maximumLength = 200

    /// Why `name` is not a plain name, or nil when it is. `what` is e.g. "process name".
    public static func problem(_ name: String, what: String) -> String? {
        if name.isEmpty { return "a \(what) must not be empty" }
        let shown = Self.shown(name)
        if name.utf8.count > maximumLength {
            return "\(what) \(shown) is \(name.utf8.count) bytes long; at most \(maximumLength) are allowed"
        }
        if name == "." || name == ".." {
            return "\(what) \(shown) is not a plain name (it would name a folder); use letters, digits, '_', '-' and '.'"
        }
        if name.hasPrefix("-") {
            return "\(what) \(shown) must not start with '-' (it would read as an option); start it with a letter or digit"
        }
        if !name.unicodeScalars.elementsEqual(name.precomposedStringWithCanonicalMapping.unicodeScalars) {
            return "\(what) \(shown) is not in composed Unicode form (NFC): it equals another spelling of the same text; write it composed (e.g. \"\u{C5}\" rather than \"\u{212B}\" or \"A\u{30A}\")"
        }
        let allowed = name.unicodeScalars.allSatisfy { $0.properties.isAlphabetic || ("0"..."9").contains($0) || "_-.".unicodeScalars.contains($0) }
        return allowed ? nil : "\(what) \(shown) may contain only letters, digits, '_', '-' and '.' (no '/', spaces or control characters)"
    }

    /// The name quoted, with control characters escaped so that a message stays one line.
    package static func shown(_ name: String) -> String {
        var text = "\""
        for scalar in name.unicodeScalars.prefix(64) {
            switch scalar {
            case "\"": text += "\\\""
            case "\\": text += "\\\\"
            case _ where scalar.value < 0x20 || scalar.value == 0x7F: text += String(format: "\\u%04X", scalar.value)
            default: text.unicodeScalars.append(scalar)
            }
        }
        return text + (name.unicodeScalars.count > 64 ? "…\"" : "\"")
    }
}
