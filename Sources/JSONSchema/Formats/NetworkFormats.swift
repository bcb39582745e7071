/// `ipv4`, `ipv6`, `hostname`, `idn-hostname`, `email` and `idn-email`.
enum NetworkFormats {
    /// Dotted-quad with four decimal octets 0–255 and no leading zeros.
    static func isIPv4(_ text: String) -> Bool {
        isIPv4(Array(text.utf8)[...])
    }

    static func isIPv4(_ bytes: ArraySlice<UInt8>) -> Bool {
        let parts = bytes.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard parts.count == 4 else { return false }
        for part in parts {
            guard (1...3).contains(part.count), part.allSatisfy({ $0 >= 48 && $0 <= 57 }) else { return false }
            if part.count > 1 && part.first == UInt8(ascii: "0") { return false }
            guard part.reduce(0, { $0 * 10 + Int($1 - 48) }) <= 255 else { return false }
        }
        return true
    }

    /// RFC 4291 text form: eight groups of 1–4 hex digits, at most one `::`, and an optional
    /// trailing dotted-quad. Zone identifiers and prefixes are not part of an address.
    static func isIPv6(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        guard !bytes.isEmpty, bytes.count <= 45 else { return false }
        let doubleColon = findDoubleColon(bytes)
        var groups = 0
        func countGroups(_ part: ArraySlice<UInt8>, allowIPv4Tail: Bool) -> Bool {
            if part.isEmpty { return true }
            let pieces = part.split(separator: UInt8(ascii: ":"), omittingEmptySubsequences: false)
            for (i, piece) in pieces.enumerated() {
                if allowIPv4Tail && i == pieces.count - 1 && piece.contains(UInt8(ascii: ".")) {
                    guard isIPv4(piece) else { return false }
                    groups += 2
                    continue
                }
                guard (1...4).contains(piece.count), piece.allSatisfy(isHex) else { return false }
                groups += 1
            }
            return true
        }
        if let dc = doubleColon {
            let head = bytes[..<dc]
            let tail = bytes[(dc + 2)...]
            if tail.contains(UInt8(ascii: ":")) && findDoubleColon(Array(tail)) != nil { return false }
            guard countGroups(head, allowIPv4Tail: false), countGroups(tail, allowIPv4Tail: true) else { return false }
            return groups <= 7
        }
        guard countGroups(bytes[...], allowIPv4Tail: true) else { return false }
        return groups == 8
    }

    private static func findDoubleColon(_ bytes: [UInt8]) -> Int? {
        guard bytes.count >= 2 else { return nil }
        for i in 0..<(bytes.count - 1) where bytes[i] == UInt8(ascii: ":") && bytes[i + 1] == UInt8(ascii: ":") {
            return i
        }
        return nil
    }

    private static func isHex(_ b: UInt8) -> Bool {
        (b >= 48 && b <= 57) || (b | 0x20 >= 97 && b | 0x20 <= 102)
    }

    /// RFC 1123 host name of LDH labels; `xn--` labels must be valid IDNA2008 A-labels.
    static func isHostname(_ text: String) -> Bool {
        guard !text.isEmpty, text.utf8.count <= 253, text.utf8.allSatisfy({ $0 < 0x80 }) else { return false }
        var unicodeLabels: [String] = []
        var hasALabel = false
        for label in text.split(separator: ".", omittingEmptySubsequences: false) {
            guard let unicodeLabel = asciiLabelToUnicode(label) else { return false }
            hasALabel = hasALabel || isALabel(label)
            unicodeLabels.append(unicodeLabel)
        }
        // Only A-labels can bring right-to-left text, and with it the Bidi rule.
        return !hasALabel || IDNA.satisfiesBidiRule(unicodeLabels)
    }

    private static func isALabel(_ label: Substring) -> Bool {
        let b = Array(label.utf8.prefix(4))
        return b.count == 4 && b[0] | 0x20 == UInt8(ascii: "x") && b[1] | 0x20 == UInt8(ascii: "n")
            && b[2] == UInt8(ascii: "-") && b[3] == UInt8(ascii: "-")
    }

    /// Validates an LDH label and returns its Unicode form (decoded when it is an A-label).
    private static func asciiLabelToUnicode(_ label: Substring) -> String? {
        guard isLDHLabel(label) else { return nil }
        if isALabel(label) {
            let encoded = String(label.dropFirst(4))
            // A-labels must be canonical: decoding and re-encoding gives the same text.
            guard let decoded = Punycode.decode(encoded), !decoded.isEmpty, IDNA.isValidULabel(decoded),
                Punycode.encode(decoded)?.lowercased() == encoded.lowercased()
            else { return nil }
            return decoded
        }
        // "--" in positions 3–4 is reserved for A-labels.
        let third = label.utf8.dropFirst(2).prefix(2)
        if third.count == 2, third.allSatisfy({ $0 == UInt8(ascii: "-") }) { return nil }
        return String(label)
    }

    private static func isLDHLabel(_ label: Substring) -> Bool {
        let bytes = label.utf8
        guard (1...63).contains(bytes.count), bytes.first != UInt8(ascii: "-"), bytes.last != UInt8(ascii: "-") else {
            return false
        }
        return bytes.allSatisfy { b in
            (b >= 48 && b <= 57) || (b | 0x20 >= 97 && b | 0x20 <= 122) || b == UInt8(ascii: "-")
        }
    }

    /// Internationalized host name: labels separated by any IDNA dot, each an A-label, an
    /// LDH label or a valid U-label.
    static func isIDNHostname(_ text: String) -> Bool {
        guard !text.isEmpty else { return false }
        let separators: Set<Unicode.Scalar> = [".", "\u{3002}", "\u{FF0E}", "\u{FF61}"]
        var labels: [String] = [""]
        for scalar in text.unicodeScalars {
            if separators.contains(scalar) { labels.append("") } else { labels[labels.count - 1].unicodeScalars.append(scalar) }
        }
        var total = 0
        var unicodeLabels: [String] = []
        for label in labels {
            guard !label.isEmpty else { return false }
            if label.utf8.allSatisfy({ $0 < 0x80 }) {
                guard let unicodeLabel = asciiLabelToUnicode(Substring(label)) else { return false }
                unicodeLabels.append(unicodeLabel)
                total += label.utf8.count + 1
            } else {
                guard IDNA.isValidULabel(label), let encoded = Punycode.encode(label), encoded.utf8.count + 4 <= 63 else {
                    return false
                }
                unicodeLabels.append(label)
                total += encoded.utf8.count + 5
            }
        }
        return total - 1 <= 253 && IDNA.satisfiesBidiRule(unicodeLabels)
    }

    /// RFC 5321 mailbox: dot-atom or quoted local part, then a host name or an address literal.
    static func isEmail(_ text: String) -> Bool {
        isEmail(text, international: false)
    }

    /// RFC 6531 mailbox: like `email` but UTF-8 is allowed in the local part and domain.
    static func isIDNEmail(_ text: String) -> Bool {
        isEmail(text, international: true)
    }

    private static func isEmail(_ text: String, international: Bool) -> Bool {
        // Searching the UTF-8 view avoids grapheme breaking; "@" is ASCII so the index is valid.
        guard let at = text.utf8.lastIndex(of: UInt8(ascii: "@")) else { return false }
        let local = text[..<at]
        let domain = String(text[text.utf8.index(after: at)...])
        guard !local.isEmpty, !domain.isEmpty, isLocalPart(local, international: international) else { return false }
        if domain.hasPrefix("[") && domain.hasSuffix("]") {
            let literal = domain.dropFirst().dropLast()
            if literal.lowercased().hasPrefix("ipv6:") { return isIPv6(String(literal.dropFirst(5))) }
            return isIPv4(String(literal))
        }
        return international ? isIDNHostname(domain) : isHostname(domain)
    }

    private static func isLocalPart(_ local: Substring, international: Bool) -> Bool {
        let scalars = Array(local.unicodeScalars)
        if scalars.first == "\"" {
            guard scalars.count >= 2, scalars.last == "\"" else { return false }
            var i = 1
            while i < scalars.count - 1 {
                let s = scalars[i]
                if s == "\\" {
                    guard i + 1 < scalars.count - 1 else { return false }
                    i += 2
                    continue
                }
                guard s == " " || (s.value >= 0x21 && s.value <= 0x7E && s != "\"") || (international && s.value >= 0x80) else {
                    return false
                }
                i += 1
            }
            return true
        }
        let atext = "!#$%&'*+-/=?^_`{|}~".unicodeScalars
        var previousDot = true
        for s in scalars {
            if s == "." {
                guard !previousDot else { return false }
                previousDot = true
                continue
            }
            let ok = ("a"..."z").contains(s) || ("A"..."Z").contains(s) || ("0"..."9").contains(s) || atext.contains(s)
                || (international && s.value >= 0x80)
            guard ok else { return false }
            previousDot = false
        }
        return !previousDot
    }
}
