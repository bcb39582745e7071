/// A pattern without special characters: matched by a plain search for its scalars, which is
/// fast on ordinary text; when that search would compare more than `SimplePattern.stepLimit`
/// scalars (e.g. `aaaaaaab` in a long run of `a`), Knuth–Morris–Pratt finishes the job in
/// time linear in the input.
struct LiteralPattern: Sendable {
    private let needle: [Unicode.Scalar]
    /// KMP's failure function: for each prefix length, the length of its longest proper
    /// prefix that is also a suffix.
    private let failure: [Int]

    /// A pattern for `pattern`, or `nil` when it contains a character special in a regex.
    init?(_ pattern: String) {
        guard pattern.unicodeScalars.allSatisfy({ !"\\^$.|?*+()[]{}".unicodeScalars.contains($0) }) else { return nil }
        needle = Array(pattern.unicodeScalars)
        var failure = Array(repeating: 0, count: needle.count + 1)
        var k = 0
        for i in needle.indices.dropFirst() {
            while k > 0 && needle[i] != needle[k] { k = failure[k] }
            if needle[i] == needle[k] { k += 1 }
            failure[i + 1] = k
        }
        self.failure = failure
    }

    /// Whether `string` contains the pattern.
    func matches(_ string: String) -> Bool {
        naiveSearch(string) ?? linearSearch(string)
    }

    /// The plain search; `nil` once it has compared more than `SimplePattern.stepLimit` scalars.
    private func naiveSearch(_ string: String) -> Bool? {
        guard let first = needle.first else { return true }
        let haystack = string.unicodeScalars
        var steps = 0
        let limit = SimplePattern.stepLimit(string.utf8.count)
        var start = haystack.startIndex
        while let found = haystack[start...].firstIndex(of: first) {
            var h = found
            var matched = true
            for s in needle {
                steps += 1
                guard h < haystack.endIndex, haystack[h] == s else {
                    matched = false
                    break
                }
                h = haystack.index(after: h)
            }
            if matched { return true }
            if steps > limit { return nil }
            start = haystack.index(after: found)
        }
        return false
    }

    private func linearSearch(_ string: String) -> Bool {
        var k = 0
        for s in string.unicodeScalars {
            while k > 0 && s != needle[k] { k = failure[k] }
            if s == needle[k] { k += 1 }
            if k == needle.count { return true }
        }
        return false
    }
}
