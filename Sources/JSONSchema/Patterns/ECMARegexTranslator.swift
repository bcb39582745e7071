/// Checks a pattern against ECMA-262 regular expression syntax (as with the `u` flag) and
/// rewrites it for ICU, whose syntax is close but whose semantics differ in a few places:
/// `\d`, `\w`, `\s` are ASCII/ECMA sets here, `$` only matches at the very end, `.` excludes
/// exactly the ECMA line terminators, and characters that ICU treats specially inside a class
/// (`[`, `&`, `{`, `$`, `:`) are escaped.
struct ECMARegexTranslator {
    /// Why a pattern is not a valid ECMA-262 regular expression.
    struct InvalidPattern: Error {
        let message: String
    }

    private let scalars: [Unicode.Scalar]
    private var i = 0
    private var output = ""
    private var groupNames: Set<String> = []
    private var referencedNames: [String] = []
    private var capturingGroups = 0
    private var maxBackreference = 0

    /// The largest quantifier bound or group number accepted: far above any useful value, far
    /// below an overflow (of Int here, or of the 32-bit counters in ICU).
    static let maxNumber = 100_000_000

    private static let ecmaSpaces =
        "\\t\\n\\x{0B}\\f\\r \\x{A0}\\x{1680}\\x{2000}-\\x{200A}\\x{2028}\\x{2029}\\x{202F}\\x{205F}\\x{3000}\\x{FEFF}"

    /// Returns the ICU form of an ECMA-262 pattern, or throws when the syntax is invalid.
    static func translate(_ pattern: String) throws(InvalidPattern) -> String {
        var translator = ECMARegexTranslator(scalars: Array(pattern.unicodeScalars))
        try translator.parseDisjunction(depth: 0)
        if translator.i < translator.scalars.count {
            throw InvalidPattern(message: "unmatched ')'")
        }
        for name in translator.referencedNames where !translator.groupNames.contains(name) {
            throw InvalidPattern(message: "backreference to unknown group name \"\(name)\"")
        }
        if translator.maxBackreference > translator.capturingGroups {
            throw InvalidPattern(message: "backreference \\\(translator.maxBackreference) to a group that does not exist")
        }
        return translator.output
    }

    private init(scalars: [Unicode.Scalar]) {
        self.scalars = scalars
    }

    private var current: Unicode.Scalar? { i < scalars.count ? scalars[i] : nil }

    private func peek(_ offset: Int) -> Unicode.Scalar? {
        i + offset < scalars.count ? scalars[i + offset] : nil
    }

    // MARK: - Structure

    private mutating func parseDisjunction(depth: Int) throws(InvalidPattern) {
        guard depth < 200 else { throw InvalidPattern(message: "groups nested too deeply") }
        var quantifiable = false
        while let c = current {
            switch c {
            case "|":
                output += "|"
                i += 1
                quantifiable = false
            case ")":
                guard depth > 0 else { throw InvalidPattern(message: "unmatched ')'") }
                return
            case "(":
                try parseGroup(depth: depth)
                quantifiable = true
            case "*", "+", "?":
                guard quantifiable else { throw InvalidPattern(message: "nothing to repeat before '\(c)'") }
                output.unicodeScalars.append(c)
                i += 1
                try parseLazySuffix()
                quantifiable = false
            case "{":
                if let quantifier = try braceQuantifier() {
                    guard quantifiable else { throw InvalidPattern(message: "nothing to repeat before '{'") }
                    output += quantifier
                    try parseLazySuffix()
                    quantifiable = false
                } else {
                    throw InvalidPattern(message: "lone '{' (escape it as \\{)")
                }
            case "}":
                throw InvalidPattern(message: "lone '}' (escape it as \\})")
            case "]":
                throw InvalidPattern(message: "lone ']' (escape it as \\])")
            case "[":
                try parseClass()
                quantifiable = true
            case "^":
                output += "^"
                i += 1
                quantifiable = false
            case "$":
                output += "\\z"
                i += 1
                quantifiable = false
            case ".":
                output += "[^\\n\\r\\x{2028}\\x{2029}]"
                i += 1
                quantifiable = true
            case "\\":
                quantifiable = try parseAtomEscape()
            default:
                appendLiteral(c, inClass: false)
                i += 1
                quantifiable = true
            }
        }
        if depth > 0 { throw InvalidPattern(message: "missing ')'") }
    }

    /// A `?` after a quantifier makes it lazy; a further quantifier is an error in ECMA-262
    /// (ICU would read it as possessive).
    private mutating func parseLazySuffix() throws(InvalidPattern) {
        if current == "?" {
            output += "?"
            i += 1
        }
        if let c = current, c == "*" || c == "+" || c == "?" || (c == "{" && braceQuantifierLength() != nil) {
            throw InvalidPattern(message: "nothing to repeat before '\(c)'")
        }
    }

    private func braceQuantifierLength() -> Int? {
        guard current == "{" else { return nil }
        var j = i + 1
        var sawDigit = false
        while j < scalars.count, ("0"..."9").contains(scalars[j]) {
            j += 1
            sawDigit = true
        }
        guard sawDigit, j < scalars.count else { return nil }
        if scalars[j] == "," {
            j += 1
            while j < scalars.count, ("0"..."9").contains(scalars[j]) { j += 1 }
        }
        guard j < scalars.count, scalars[j] == "}" else { return nil }
        return j - i + 1
    }

    /// Reads `{n}`, `{n,}` or `{n,m}`. ECMA-262 allows any bound, but ICU keeps bounds in
    /// 32 bits; a larger one is an error here rather than an overflow later.
    private mutating func braceQuantifier() throws(InvalidPattern) -> String? {
        guard let length = braceQuantifierLength() else { return nil }
        let body = String(String.UnicodeScalarView(scalars[(i + 1)..<(i + length - 1)]))
        let bounds = body.split(separator: ",", omittingEmptySubsequences: false)
        var values: [Int] = []
        for bound in bounds where !bound.isEmpty {
            guard let value = Int(bound), value <= ECMARegexTranslator.maxNumber else {
                throw InvalidPattern(message: "quantifier {\(body)}: a bound may be at most \(ECMARegexTranslator.maxNumber)")
            }
            values.append(value)
        }
        if values.count == 2, values[0] > values[1] {
            throw InvalidPattern(message: "quantifier {\(body)}: the minimum is larger than the maximum")
        }
        i += length
        return "{" + body + "}"
    }

    private mutating func parseGroup(depth: Int) throws(InvalidPattern) {
        i += 1
        if current == "?" {
            switch peek(1) {
            case ":":
                output += "(?:"
                i += 2
            case "=", "!":
                output += "(?" + String(peek(1)!)
                i += 2
            case "<":
                if peek(2) == "=" || peek(2) == "!" {
                    output += "(?<" + String(peek(2)!)
                    i += 3
                } else {
                    i += 2
                    let name = try parseGroupName()
                    guard groupNames.insert(name).inserted else {
                        throw InvalidPattern(message: "duplicate group name \"\(name)\"")
                    }
                    capturingGroups += 1
                    output += "(?<\(name)>"
                }
            default:
                throw InvalidPattern(message: "invalid group: '(?' must be followed by ':', '=', '!', '<=', '<!' or '<name>'")
            }
        } else {
            capturingGroups += 1
            output += "("
        }
        try parseDisjunction(depth: depth + 1)
        guard current == ")" else { throw InvalidPattern(message: "missing ')'") }
        output += ")"
        i += 1
    }

    /// Reads `name>`; ICU only allows ASCII letters and digits in group names.
    private mutating func parseGroupName() throws(InvalidPattern) -> String {
        var name = ""
        while let c = current, c != ">" {
            guard c.properties.isAlphabetic || ("0"..."9").contains(c) || c == "_" || c == "$" else {
                throw InvalidPattern(message: "invalid character in group name")
            }
            name.unicodeScalars.append(c)
            i += 1
        }
        guard current == ">", !name.isEmpty, let first = name.unicodeScalars.first, !("0"..."9").contains(first) else {
            throw InvalidPattern(message: "invalid group name")
        }
        i += 1
        return name
    }

    // MARK: - Character classes

    private mutating func parseClass() throws(InvalidPattern) {
        i += 1
        var negated = false
        if current == "^" {
            negated = true
            i += 1
        }
        if current == "]" {
            // `[]` never matches and `[^]` matches anything in ECMA-262; ICU has no such sets.
            // `(?:(?!))`, not `(?!)`: ICU refuses a quantifier on a bare lookahead (`[]*`).
            output += negated ? "(?s:.)" : "(?:(?!))"
            i += 1
            return
        }
        output += negated ? "[^" : "["
        while let c = current, c != "]" {
            if c == "\\" {
                try parseClassEscape()
            } else {
                appendLiteral(c, inClass: true)
                i += 1
            }
        }
        guard current == "]" else { throw InvalidPattern(message: "missing ']'") }
        output += "]"
        i += 1
    }

    private mutating func parseClassEscape() throws(InvalidPattern) {
        i += 1
        guard let c = current else { throw InvalidPattern(message: "pattern ends with '\\'") }
        switch c {
        case "d": output += "0-9"
        case "D": output += "[^0-9]"
        case "w": output += "a-zA-Z0-9_"
        case "W": output += "[^a-zA-Z0-9_]"
        case "s": output += ECMARegexTranslator.ecmaSpaces
        case "S": output += "[^" + ECMARegexTranslator.ecmaSpaces + "]"
        case "b": output += "\\x{08}"
        case "-": output += "\\-"
        default:
            try parseCharacterEscape(c)
            return
        }
        i += 1
    }

    // MARK: - Escapes

    /// Handles an escape outside a class; returns whether the result can be quantified.
    private mutating func parseAtomEscape() throws(InvalidPattern) -> Bool {
        i += 1
        guard let c = current else { throw InvalidPattern(message: "pattern ends with '\\'") }
        switch c {
        case "d": output += "[0-9]"
        case "D": output += "[^0-9]"
        case "w": output += "[a-zA-Z0-9_]"
        case "W": output += "[^a-zA-Z0-9_]"
        case "s": output += "[" + ECMARegexTranslator.ecmaSpaces + "]"
        case "S": output += "[^" + ECMARegexTranslator.ecmaSpaces + "]"
        case "b", "B":
            output += "\\" + String(c)
            i += 1
            return false
        case "k":
            i += 1
            guard current == "<" else { throw InvalidPattern(message: "\\k must be followed by <name>") }
            i += 1
            let name = try parseGroupName()
            referencedNames.append(name)
            output += "\\k<\(name)>"
            return true
        case "1"..."9":
            // A pattern cannot have more groups than it has characters, so a longer number
            // names no group; reading it digit by digit must not overflow either.
            var number = 0
            let start = i
            while let d = current, ("0"..."9").contains(d) {
                number = min(number * 10 + Int(d.value - 48), ECMARegexTranslator.maxNumber + 1)
                i += 1
            }
            guard number <= ECMARegexTranslator.maxNumber else {
                throw InvalidPattern(message: "backreference \\\(String(String.UnicodeScalarView(scalars[start..<i]))) to a group that does not exist")
            }
            maxBackreference = max(maxBackreference, number)
            output += "\\\(number)"
            return true
        default:
            try parseCharacterEscape(c)
            return true
        }
        i += 1
        return true
    }

    /// Escapes that denote a single character (valid inside and outside classes).
    private mutating func parseCharacterEscape(_ c: Unicode.Scalar) throws(InvalidPattern) {
        switch c {
        case "f": output += "\\f"
        case "n": output += "\\n"
        case "r": output += "\\r"
        case "t": output += "\\t"
        case "v": output += "\\x{0B}"
        case "0":
            if let next = peek(1), ("0"..."9").contains(next) {
                throw InvalidPattern(message: "octal escapes are not allowed")
            }
            output += "\\x{00}"
        case "c":
            guard let letter = peek(1), ("a"..."z").contains(letter) || ("A"..."Z").contains(letter) else {
                throw InvalidPattern(message: "\\c must be followed by a letter")
            }
            output += "\\x{" + String(letter.value & 31, radix: 16) + "}"
            i += 1
        case "x":
            guard let h1 = peek(1), let h2 = peek(2), h1.properties.isASCIIHexDigit, h2.properties.isASCIIHexDigit else {
                throw InvalidPattern(message: "\\x must be followed by two hex digits")
            }
            output += "\\x{" + String(h1) + String(h2) + "}"
            i += 2
        case "u":
            try parseUnicodeEscape()
            return
        case "p", "P":
            guard peek(1) == "{" else { throw InvalidPattern(message: "\\\(c) must be followed by {property}") }
            var j = i + 2
            var body = ""
            while j < scalars.count, scalars[j] != "}" {
                let s = scalars[j]
                guard s.properties.isAlphabetic || ("0"..."9").contains(s) || s == "_" || s == "=" else {
                    throw InvalidPattern(message: "invalid Unicode property name")
                }
                body.unicodeScalars.append(s)
                j += 1
            }
            guard j < scalars.count, !body.isEmpty else { throw InvalidPattern(message: "unterminated \\\(c){...}") }
            output += "\\\(c){\(body)}"
            i = j
        default:
            // Only syntax characters may be escaped as themselves (the `u`-mode rule).
            guard "^$\\.*+?()[]{}|/".unicodeScalars.contains(c) else {
                throw InvalidPattern(message: "invalid escape '\\\(c)'")
            }
            output += "\\" + String(c)
        }
        i += 1
    }

    private mutating func parseUnicodeEscape() throws(InvalidPattern) {
        if peek(1) == "{" {
            var j = i + 2
            var hex = ""
            while j < scalars.count, scalars[j].properties.isASCIIHexDigit {
                hex.unicodeScalars.append(scalars[j])
                j += 1
            }
            guard j < scalars.count, scalars[j] == "}", !hex.isEmpty, let value = UInt32(hex, radix: 16), value <= 0x10FFFF else {
                throw InvalidPattern(message: "invalid \\u{...} escape")
            }
            output += "\\x{" + hex + "}"
            i = j + 1
            return
        }
        guard let value = hex4(at: i + 1) else { throw InvalidPattern(message: "\\u must be followed by four hex digits") }
        i += 5
        if (0xD800...0xDBFF).contains(value), peek(0) == "\\", peek(1) == "u", let low = hex4(at: i + 2),
            (0xDC00...0xDFFF).contains(low)
        {
            let combined = 0x10000 + ((value - 0xD800) << 10) + (low - 0xDC00)
            output += "\\x{" + String(combined, radix: 16) + "}"
            i += 6
            return
        }
        output += "\\x{" + String(value, radix: 16) + "}"
    }

    private func hex4(at position: Int) -> UInt32? {
        guard position + 4 <= scalars.count else { return nil }
        var text = ""
        for s in scalars[position..<(position + 4)] {
            guard s.properties.isASCIIHexDigit else { return nil }
            text.unicodeScalars.append(s)
        }
        return UInt32(text, radix: 16)
    }

    // MARK: - Literals

    private mutating func appendLiteral(_ c: Unicode.Scalar, inClass: Bool) {
        let special: String = inClass ? "[]\\&{}$:^-" : "\\^$.|?*+()[]{}#"
        if c == "-" && inClass {
            output += "-"
        } else if c == "^" && inClass {
            output += "\\^"
        } else if special.unicodeScalars.contains(c) {
            output += "\\" + String(c)
        } else if c.value < 0x20 || c.value == 0x7F || c.properties.isWhitespace {
            output += "\\x{" + String(c.value, radix: 16) + "}"
        } else {
            output.unicodeScalars.append(c)
        }
    }
}
