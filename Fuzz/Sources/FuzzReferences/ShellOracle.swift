/// How dash (`/bin/sh` here) reads a command line, written apart from ``ShellPlacement`` to
/// check it: the quoting context at each character of the line. Quotes, escapes, backquotes, `$(…)`
/// and `${…}` nest as the shell nests them; `#` at the start of a word begins a comment. A
/// line with a here-document, an arithmetic expansion or a `case` (whose `)` the nesting
/// below would misread) is not judged: nil.
enum ShellOracle {
    enum Context: CustomStringConvertible {
        case plain, single, double, backquote, command, parameter, comment

        var description: String {
            switch self {
            case .plain: "as plain words"
            case .single: "inside single quotes"
            case .double: "inside double quotes"
            case .backquote: "inside backquotes"
            case .command: "inside $(…)"
            case .parameter: "inside ${…}"
            case .comment: "inside a comment"
            }
        }
    }

    /// The contexts, innermost last, at a character.
    struct Place: CustomStringConvertible {
        var stack: [Context]

        /// A single-quoted word stays one literal word here: outside quotes and comments, and
        /// not in a `${…}` inside double quotes (where single quotes are literal).
        var isSafe: Bool {
            guard let innermost = stack.last, ![.single, .double, .comment].contains(innermost) else { return false }
            return stack.last(where: { $0 != .parameter }) != .double
        }

        var description: String { stack.last.map { "\($0) (\(stack))" } ?? "?" }
    }

    /// The place of each character of `line`, or nil when the line is not judged.
    static func places(in line: [Unicode.Scalar]) -> [Place]? {
        // Looked for as bytes (`contains` on a String would match graphemes).
        let bytes = Array(String(String.UnicodeScalarView(line)).utf8)
        func has(_ word: String) -> Bool { bytes.indices.contains { bytes[$0...].starts(with: word.utf8) } }
        guard !has("<<"), !has("$(("), !has("case") else { return nil }
        var places: [Place] = []
        var stack: [Context] = [.plain]
        var wordStart = true
        var index = 0
        while index < line.count {
            let character = line[index]
            places.append(Place(stack: stack))
            let peek = index + 1 < line.count ? line[index + 1] : nil
            let context = stack.last ?? .plain
            var startsWord = false
            switch (context, character) {
            case (.comment, "\n"): stack.removeLast(); startsWord = true
            case (.comment, "`") where stack.contains(.backquote):
                // dash finds a backquote's end before it parses the text between: a comment
                // inside ends there, with the backquotes.
                while let last = stack.popLast(), last != .backquote {}
            case (.comment, _): break
            case (.single, "'"): stack.removeLast()
            case (.single, _): break
            case (_, "\\") where peek != nil:
                // Escapes the next character (in double quotes only $ ` " \ and a newline, but
                // the backslash then stays, and nothing it leaves opens a quote).
                places.append(Place(stack: stack + [.single]))
                index += 2
                wordStart = false
                continue
            case (.double, "\""): stack.removeLast()
            case (.backquote, "`"): stack.removeLast()
            case (.parameter, "}"): stack.removeLast()
            case (.command, ")"): stack.removeLast(); startsWord = true
            case (_, "`"): stack.append(.backquote)
            case (_, "$") where peek == "(" || peek == "{":
                stack.append(peek == "(" ? .command : .parameter)
                places.append(Place(stack: stack))
                index += 2
                wordStart = peek == "("
                continue
            case (.double, _): break
            case (_, "'"):
                // In a ${…} within double quotes a ' is a plain character.
                if context != .parameter || stack.last(where: { $0 != .parameter }) != .double { stack.append(.single) }
            case (_, "\""): stack.append(.double)
            case (_, "#") where wordStart && context != .parameter: stack.append(.comment)
            case (_, "("):
                // A subshell inside $(…) would need its own `)`: not followed.
                if context == .command { return nil }
                startsWord = true
            // dash's blanks: space, tab and newline (no other Unicode space).
            default: startsWord = " \t\n;&|()<>".unicodeScalars.contains(character)
            }
            wordStart = startsWord
            index += 1
        }
        return places
    }
}
