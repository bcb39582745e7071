/// A matcher for the most common shape of schema patterns: optional `^`, a sequence of
/// single-character items (literals, `.`, classes, `\d`/`\w`/`\s`) each with an optional
/// greedy quantifier, optional `$`. For example `^[a-z][a-z0-9_-]*$` or `^\d{4}-\d{2}$`.
///
/// Such patterns are matched directly on Unicode scalars, an order of magnitude faster than
/// a general regex engine; anything else (groups, alternation, lookaround, lazy quantifiers,
/// backreferences, property escapes) is left to `PatternRegex`'s general matcher, and so is any
/// input on which backtracking here would take more than `stepLimit` steps.
struct SimplePattern: Sendable {
    private struct Item: Sendable {
        let set: ScalarSet
        let min: Int
        let max: Int
    }

    private let items: [Item]
    private let anchoredStart: Bool
    private let anchoredEnd: Bool

    /// Parses `pattern`; `nil` when it is not of the simple shape.
    init?(_ pattern: String) {
        var scalars = Array(pattern.unicodeScalars)[...]
        anchoredStart = scalars.first == "^"
        if anchoredStart { scalars = scalars.dropFirst() }
        var endAnchor = false
        if scalars.last == "$", !SimplePattern.isEscaped(scalars, at: scalars.endIndex - 1) {
            endAnchor = true
            scalars = scalars.dropLast()
        }
        anchoredEnd = endAnchor
        var parsed: [Item] = []
        while let c = scalars.first {
            let set: ScalarSet
            switch c {
            case "\\":
                guard scalars.count >= 2, let escaped = ScalarSet.escape(scalars[scalars.startIndex + 1]) else { return nil }
                set = escaped
                scalars = scalars.dropFirst(2)
            case "[":
                guard let (classSet, length) = ScalarSet.parseClass(scalars) else { return nil }
                set = classSet
                scalars = scalars.dropFirst(length)
            case ".":
                set = .notLineTerminator
                scalars = scalars.dropFirst()
            case "(", ")", "|", "^", "$", "*", "+", "?", "{", "}", "]":
                return nil
            default:
                set = ScalarSet(single: c)
                scalars = scalars.dropFirst()
            }
            var min = 1
            var max = 1
            switch scalars.first {
            case "*": (min, max) = (0, Int.max); scalars = scalars.dropFirst()
            case "+": (min, max) = (1, Int.max); scalars = scalars.dropFirst()
            case "?": (min, max) = (0, 1); scalars = scalars.dropFirst()
            case "{":
                guard let (low, high, length) = SimplePattern.parseBraces(scalars) else { return nil }
                (min, max) = (low, high)
                scalars = scalars.dropFirst(length)
            default: break
            }
            // Lazy or stacked quantifiers are not part of the simple shape.
            if let next = scalars.first, next == "?" || next == "*" || next == "+" || next == "{" { return nil }
            parsed.append(Item(set: set, min: min, max: max))
        }
        items = parsed
    }

    private static func isEscaped(_ scalars: ArraySlice<Unicode.Scalar>, at index: Int) -> Bool {
        var backslashes = 0
        var i = index - 1
        while i >= scalars.startIndex, scalars[i] == "\\" {
            backslashes += 1
            i -= 1
        }
        return backslashes % 2 == 1
    }

    /// `{n}`, `{n,}`, `{n,m}` → (min, max, length consumed).
    private static func parseBraces(_ scalars: ArraySlice<Unicode.Scalar>) -> (Int, Int, Int)? {
        guard let close = scalars.firstIndex(of: "}") else { return nil }
        let body = String(String.UnicodeScalarView(scalars[(scalars.startIndex + 1)..<close]))
        let parts = body.split(separator: ",", omittingEmptySubsequences: false)
        guard (1...2).contains(parts.count), let low = Int(parts[0]), low <= 10_000 else { return nil }
        var high = low
        if parts.count == 2 {
            if parts[1].isEmpty {
                high = Int.max
            } else {
                guard let value = Int(parts[1]), value >= low else { return nil }
                high = value
            }
        }
        return (low, high, close - scalars.startIndex + 1)
    }

    /// The most steps a fast path may take on an input of `length` scalars before leaving it
    /// to the general matcher: linear in the input, so that the fast paths never backtrack
    /// without bound.
    static func stepLimit(_ length: Int) -> Int {
        16 * length + 256
    }

    /// Whether the pattern matches somewhere in `scalars`; `nil` when that would take more
    /// than `stepLimit` steps of backtracking (e.g. `a*a*a*a*b` on a long run of `a`).
    func matches(_ scalars: [Unicode.Scalar]) -> Bool? {
        var steps = 0
        let limit = SimplePattern.stepLimit(scalars.count)
        if anchoredStart { return matchHere(scalars, 0, 0, &steps, limit) }
        for start in 0...scalars.count {
            guard let found = matchHere(scalars, 0, start, &steps, limit) else { return nil }
            if found { return true }
        }
        return false
    }

    private func matchHere(_ s: [Unicode.Scalar], _ itemIndex: Int, _ position: Int, _ steps: inout Int, _ limit: Int) -> Bool? {
        guard itemIndex < items.count else { return !anchoredEnd || position == s.count }
        let item = items[itemIndex]
        var count = 0
        while count < item.max, position + count < s.count, item.set.contains(s[position + count]) { count += 1 }
        steps += count + 1
        guard steps <= limit else { return nil }
        guard count >= item.min else { return false }
        // The last item needs no backtracking: only the end anchor can still fail.
        if itemIndex == items.count - 1 {
            return !anchoredEnd || position + count == s.count
        }
        while count >= item.min {
            guard let found = matchHere(s, itemIndex + 1, position + count, &steps, limit) else { return nil }
            if found { return true }
            count -= 1
        }
        return false
    }
}
