import Foundation

/// Where `{{input…}}` references stand in a `"shell": true` line, and which places are refused.
///
/// A reference in a shell line is replaced by its value single-quoted (`'…'`, a `'` in it as
/// `'\''`): one word the shell does not interpret, but only where the shell reads it as a word
/// of its own. Inside quotes the value's quotes end the line's own (`echo '{{input.a}}'` runs
/// `; touch F` or `$(…)` from the input; inside `"…"` a `$(…)` of the value is expanded), in a
/// here-document nothing is quoted, inside backquotes the text is parsed twice. So a reference
/// must be a whole word: outside quotes, backquotes and here-documents, with a blank, the
/// line's start or end, or one of `; & | ( ) < >` on each side. Anything else is refused when
/// the settings are read, at the command line's pointer (and a run of a definition that
/// escaped that check fails before anything starts).
///
/// A task that runs a shell itself (`["/bin/sh", "-c", "SCRIPT", "NAME", "ARG"…]`) gets its
/// values unquoted: a reference in its script is refused; the arguments after it are `$1`….
package enum ShellPlacement {
    /// A reference standing where its value would not be one word.
    package struct Misplaced: Equatable {
        package var reference: String
        /// Offset of the reference's `{{` in the line, in characters.
        package var offset: Int
        /// Why, e.g. "inside single quotes".
        package var place: String
        /// The first field name (`a` of `{{input.a.b}}`), nil for the whole input.
        package var field: String?
    }

    /// The shells whose `-c` argument is a shell line when a task runs them itself.
    package static let shells: Set<String> = ["sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "busybox"]

    /// The problems of `spec`'s arguments, by argument: the line of a `"shell": true` task,
    /// and the script of a task that runs a shell itself (`["/bin/sh", "-c", "SCRIPT", …]`),
    /// into which a value would go unquoted.
    package static func problems(of spec: TaskDefinition.CommandSpec) -> [(index: Int, message: String)] {
        if spec.shell {
            return spec.arguments.first.map { line in misplaced(in: line).map { (0, message($0)) } } ?? []
        }
        guard let index = scriptIndex(spec.arguments) else { return [] }
        let script = spec.arguments[index]
        return InputReferences.references(in: script).references.map { reference in
            let text = String(script[reference.range])
            let variable = reference.path.first.flatMap(InputEnvironment.name(forField:)).map { ", or use the variable \"$\($0)\"" } ?? ""
            return (index, "\(text) is in the script that \(spec.arguments[0]) -c runs, where its value would be read as shell code (unquoted); "
                + "expected references only in the arguments after the script: pass the value as a positional parameter "
                + "([\"\(spec.arguments[0])\", \"-c\", \"echo \\\"$1\\\"\", \"job\", \"\(text)\"])\(variable), "
                + "or write \"shell\": true with the reference as a word of its own")
        }
    }

    /// The index of the script in `arguments` when the program is a shell run with `-c`
    /// (the first argument after an option holding `c`, other options skipped).
    private static func scriptIndex(_ arguments: [String]) -> Int? {
        guard let program = arguments.first.map({ URL(fileURLWithPath: $0).lastPathComponent }), shells.contains(program) else { return nil }
        // `busybox sh -c …`: the applet is the shell (another applet's -c is not a script).
        if program == "busybox", arguments.count < 2 || !shells.contains(arguments[1]) || arguments[1] == "busybox" { return nil }
        var index = program == "busybox" ? 2 : 1
        var sawC = false
        while index < arguments.count {
            let argument = arguments[index]
            if argument == "--" { index += 1; break }
            guard argument.hasPrefix("-") || argument.hasPrefix("+"), argument.count > 1 else { break }
            if argument.hasPrefix("-"), !argument.hasPrefix("--"), argument.contains("c") { sawC = true }
            // `-o OPTION` takes the next argument.
            if argument == "-o" || argument == "+o" { index += 1 }
            index += 1
        }
        return sawC && index < arguments.count ? index : nil
    }

    /// The references of `line` that do not stand as whole words outside quotes.
    package static func misplaced(in line: String) -> [Misplaced] {
        let references = InputReferences.references(in: line).references
        guard !references.isEmpty else { return [] }
        let contexts = ShellLineScanner.contexts(of: line)
        var found: [Misplaced] = []
        for reference in references {
            let place: String?
            switch contexts[reference.range.lowerBound] ?? .plain {
            case .single: place = "inside single quotes"
            case .double: place = "inside double quotes"
            case .backquote: place = "inside backquotes (`…`)"
            case .hereDocument: place = "in a here-document"
            case .comment: place = "in a comment (a value with a newline would end it)"
            case .parameter: place = "inside ${…}"
            case .unfollowed: place = "after a case inside $(…) within quotes, which this check does not follow"
            case .plain, .command:
                // Scalars, as dash reads bytes: a blank followed by a combining mark is no blank.
                let scalars = line.unicodeScalars
                let before = reference.range.lowerBound == line.startIndex ? nil : scalars.index(before: reference.range.lowerBound)
                let after = reference.range.upperBound == line.endIndex ? nil : scalars[reference.range.upperBound]
                if let before, scalars[before] == "\n", before > line.startIndex, scalars[scalars.index(before: before)] == "\\" {
                    place = "inside a word (after a line continuation: \\ and a newline join the lines)"
                } else if let before, !isBoundary(scalars[before]) {
                    place = "inside a word (after \"\(scalars[before])\")"
                } else if let after, !isBoundary(after) {
                    place = "inside a word (before \"\(after)\")"
                } else {
                    place = nil
                }
            }
            guard let place else { continue }
            found.append(Misplaced(reference: String(line[reference.range]), offset: line.distance(from: line.startIndex, to: reference.range.lowerBound),
                                   place: place, field: reference.path.first))
        }
        return found
    }

    /// What a settings error says for `misplaced` in the line (the pointer and file are the
    /// report's): what was found, what is expected, and how to write it.
    package static func message(_ misplaced: Misplaced) -> String {
        let variable = misplaced.field.flatMap(InputEnvironment.name(forField:)).map { "\"$\($0)\"" }
        let alternative = variable.map { ", or use the variable \($0) (the input's field, set for every command)" } ?? ", or read the input from stdin (the whole input as JSON)"
        return "\(misplaced.reference) at character \(misplaced.offset) of the shell line is \(misplaced.place); "
            + "with \"shell\": true a reference is put in as one single-quoted word, which is safe only as a word of its own "
            + "(its value's quotes would end the line's, and the input would run as shell code); "
            + "expected it alone between blanks, outside quotes: write the reference as a word of its own, e.g. echo \(misplaced.reference)\(alternative)"
    }

    /// Whether `character` ends a shell word outside quotes: dash's blanks (space, tab,
    /// newline; not other Unicode spaces) and its operators.
    package static func isBoundary(_ character: Unicode.Scalar) -> Bool {
        " \t\n;&|()<>".unicodeScalars.contains(character)
    }
}
