/// "Did you mean …?" suggestions for misspelled names: property names and enum values here,
/// settings keys, process types and process names in the host.
public enum Suggestions {
    /// The candidate closest to `word`: a case-insensitive match, or one within a
    /// Damerau-Levenshtein distance of 2 (and less than the length of either word, so that
    /// short names do not match everything).
    public static func closest(to word: String, among candidates: [String]) -> String? {
        let lowered = word.lowercased()
        if let sameIgnoringCase = candidates.first(where: { $0.lowercased() == lowered && $0 != word }) {
            return sameIgnoringCase
        }
        var best: (String, Int)?
        let a = Array(lowered.unicodeScalars)
        for candidate in candidates where candidate != word {
            let b = Array(candidate.lowercased().unicodeScalars)
            guard abs(a.count - b.count) <= 2 else { continue }
            let d = distance(a, b)
            if d <= 2 && d < min(a.count, b.count), d < (best?.1 ?? Int.max) {
                best = (candidate, d)
            }
        }
        return best?.0
    }

    /// `; did you mean "x"?` when a candidate is close to `word`, else an empty string.
    public static func hint(for word: String, in candidates: [String]) -> String {
        closest(to: word, among: candidates).map { "; did you mean \"\($0)\"?" } ?? ""
    }

    /// Optimal-string-alignment distance: insertions, deletions, substitutions and
    /// transpositions of adjacent characters each cost 1.
    static func distance(_ a: [Unicode.Scalar], _ b: [Unicode.Scalar]) -> Int {
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var previous2 = [Int](repeating: 0, count: b.count + 1)
        var previous = Array(0...b.count)
        var current = [Int](repeating: 0, count: b.count + 1)
        for i in 1...a.count {
            current[0] = i
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                var value = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    value = min(value, previous2[j - 2] + 1)
                }
                current[j] = value
            }
            (previous2, previous, current) = (previous, current, previous2)
        }
        return previous[b.count]
    }
}
