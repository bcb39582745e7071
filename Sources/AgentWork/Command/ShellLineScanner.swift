/// The quoting context at each character that opens a reference (`{`) of a `/bin/sh` line,
/// walking it as dash reads it (see ``ShellPlacement``): `\` escapes outside single quotes;
/// `'…'`, `"…"`, `` `…` ``, `$(…)` and `${…}` nest as the shell nests them (a `"` inside a
/// `$(…)` or `${…}` within double quotes opens a quote of its own, and a `'` inside a `${…}`
/// within double quotes is a plain character); an unquoted `#` that starts a word starts a
/// comment to the end of its line; after an unquoted `<<` the lines that follow are a
/// here-document (to the end of the line: its end marker is not looked for).
///
/// Where the walk could be wrong, it refuses rather than guesses: a reference inside a
/// `$(…)` within quotes counts as quoted, and after a `case` inside such a `$(…)` (whose
/// patterns end in a `)` the walk would take for the end) every reference is refused.
package struct ShellLineScanner {
    package enum Context {
        case plain, single, double, backquote, hereDocument, comment
        /// `$(…)`, or `(…)` inside it.
        case command
        /// `${…}`.
        case parameter
        /// After what the walk does not follow.
        case unfollowed
    }

    private var stack: [Context] = [.plain]
    private var hereDocumentPending = false
    /// Whether the next character starts a word: after the line's start or a boundary, not
    /// after an escaped character (`\ #` is no comment).
    private var wordStart = true
    private var lastWord = ""

    /// The context of each `{` in `line`: what a reference starting there stands in.
    ///
    /// The walk reads Unicode scalars, as dash reads bytes: a `"` followed by a combining
    /// mark is one `Character` but still a quote to dash, and `\r\n` still ends a line. The
    /// text of each `{{input…}}` reference is read as one letter: its field names may hold
    /// quotes, but the value replaces them before the shell reads the line.
    package static func contexts(of line: String) -> [String.Index: Context] {
        let scalars = line.unicodeScalars
        let ends = Dictionary(InputReferences.references(in: line).references.map { ($0.range.lowerBound, $0.range.upperBound) },
                              uniquingKeysWith: { first, _ in first })
        var scanner = ShellLineScanner()
        var contexts: [String.Index: Context] = [:]
        var index = scalars.startIndex
        while index < scalars.endIndex {
            let before = scanner.effective
            if scalars[index] == "{" { contexts[index] = before }
            if let end = ends[index] {
                _ = scanner.step("R", [])
                index = end
                continue
            }
            let second = scalars.index(after: index)
            let ahead = Array(scalars[second...].prefix(2))
            let taken = scanner.step(scalars[index], ahead)
            guard taken > 1 else { index = second; continue }
            // An escaped `{`, or the one of `${`: in the context the first character was in
            // (and an escaped reference is still one letter).
            if ahead.first == "{" { contexts[second] = before }
            index = ends[second] ?? scalars.index(index, offsetBy: taken, limitedBy: scalars.endIndex) ?? scalars.endIndex
        }
        return contexts
    }

    /// What a reference here stands in: a `$(…)` counts as plain words unless it is inside
    /// quotes or backquotes, where it counts as the quote.
    private var effective: Context {
        let top = stack.last ?? .plain
        guard top == .command else { return top }
        if stack.contains(.double) { return .double }
        return stack.contains(.backquote) ? .backquote : .plain
    }

    /// Whether a `'` opens a quote here: not in a `${…}` within double quotes.
    private var quoteOpens: Bool { stack.last(where: { $0 != .parameter }) != .double }

    /// Reads `character` (`ahead`: the two after it); how many scalars were taken.
    private mutating func step(_ character: Unicode.Scalar, _ ahead: [Unicode.Scalar]) -> Int {
        let next = ahead.first
        let context = stack.last ?? .plain
        let startsWord = wordStart
        let words = context == .plain || context == .command
        wordStart = words && ShellPlacement.isBoundary(character)
        if words {
            if ShellPlacement.isBoundary(character) || character == "\"" || character == "'" {
                if lastWord == "case", stack.contains(.command), stack.contains(.double) || stack.contains(.backquote) { stack = [.unfollowed] }
                lastWord = ""
            } else {
                lastWord.unicodeScalars.append(character)
            }
        }
        switch (context, character) {
        case (.hereDocument, _), (.unfollowed, _):
            return 1
        case (.comment, "\n"):
            // The line's end: a here-document announced before the comment starts here.
            if hereDocumentPending { stack = [.hereDocument] } else { stack.removeLast() }
            wordStart = true
        case (.comment, _):
            return 1
        case (.single, "'"), (.double, "\""), (.backquote, "`"), (.parameter, "}"), (.command, ")"):
            stack.removeLast()
        case (.single, _):
            return 1
        case (_, "\\") where next != nil:
            wordStart = false
            return 2
        case (_, "$") where next == "(" || next == "{":
            stack.append(next == "(" ? .command : .parameter)
            wordStart = next == "("
            return 2
        case (.plain, "#"), (.command, "#"):
            if startsWord { stack.append(.comment) }
        case (.command, "("):
            stack.append(.command)
        case (_, "`"):
            stack.append(.backquote)
        case (.double, _):
            break
        case (_, "'") where quoteOpens:
            stack.append(.single)
        case (_, "\""):
            stack.append(.double)
        case (.plain, "<"), (.command, "<"):
            // `<<<` is a here-string (a word); `<<` starts a here-document.
            guard next == "<" else { break }
            guard ahead.count < 2 || ahead[1] != "<" else { return 3 }
            hereDocumentPending = true
            return 2
        case (.plain, "\n"), (.command, "\n"):
            if hereDocumentPending { stack = [.hereDocument] }
        default:
            break
        }
        return 1
    }
}
