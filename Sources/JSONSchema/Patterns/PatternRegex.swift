import Foundation

/// A compiled ECMA-262 regular expression for `pattern` and `patternProperties`.
///
/// Patterns are translated to ICU syntax once (see `ECMARegexTranslator`) and compiled once
/// with `NSRegularExpression`, which measured faster than Swift `Regex` here. Literal patterns
/// and simple single-character sequences (see `SimplePattern`) skip the regex engine.
struct PatternRegex: @unchecked Sendable {
    // NSRegularExpression is immutable and documented as safe to use from several threads.
    private let regex: NSRegularExpression?
    private let literal: [Unicode.Scalar]?
    private let simple: SimplePattern?
    /// The pattern as written in the schema.
    let source: String

    /// Compiles `pattern`; throws a readable message when it is not a supported ECMA-262 regex.
    init(_ pattern: String) throws(ECMARegexTranslator.InvalidPattern) {
        source = pattern
        // Translating also checks ECMA-262 syntax, whichever matcher ends up being used.
        let translated = try ECMARegexTranslator.translate(pattern)
        if PatternRegex.isLiteral(pattern) {
            literal = Array(pattern.unicodeScalars)
            simple = nil
            regex = nil
        } else if let simple = SimplePattern(pattern) {
            literal = nil
            self.simple = simple
            regex = nil
        } else {
            do {
                regex = try NSRegularExpression(pattern: translated, options: [])
            } catch {
                throw ECMARegexTranslator.InvalidPattern(message: "not supported by the regular expression engine")
            }
            literal = nil
            simple = nil
        }
    }

    /// Whether the pattern matches anywhere in `string` (patterns are not implicitly anchored).
    func matches(_ string: String) -> Bool {
        if let literal { return PatternRegex.contains(string, literal) }
        if let simple { return simple.matches(string) }
        guard let regex else { return false }
        let range = NSRange(location: 0, length: string.utf16.count)
        return regex.firstMatch(in: string, options: [], range: range) != nil
    }

    private static func isLiteral(_ pattern: String) -> Bool {
        pattern.unicodeScalars.allSatisfy { s in
            !"\\^$.|?*+()[]{}".unicodeScalars.contains(s)
        }
    }

    private static func contains(_ string: String, _ needle: [Unicode.Scalar]) -> Bool {
        guard let first = needle.first else { return true }
        let haystack = string.unicodeScalars
        var start = haystack.startIndex
        while let found = haystack[start...].firstIndex(of: first) {
            var h = found
            var matched = true
            for s in needle {
                guard h < haystack.endIndex, haystack[h] == s else {
                    matched = false
                    break
                }
                h = haystack.index(after: h)
            }
            if matched { return true }
            start = haystack.index(after: found)
        }
        return false
    }
}
