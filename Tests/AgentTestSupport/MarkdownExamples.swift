import Foundation

/// One command of a shell example in a Markdown file (a ```sh or ```bash block).
package struct MarkdownExample: CustomStringConvertible {
    /// The file and the 1-based line the command starts on.
    package var file: String
    package var line: Int
    /// The command as written: continuation lines joined, a `$ ` prompt and the trailing
    /// comment removed.
    package var command: String
    /// The trailing comment and the comment lines right above the command (what the document
    /// says of it: "200 … or 503", "409 if the name is taken").
    package var notes: String
    /// The block's variable assignments before the command (`H='…'; A=http://…`,
    /// `export AUTH=…`), in order.
    package var assignments: [String]
    /// The index of its block in the file (commands of one block share its variables).
    package var block: Int

    /// The command's first word, without a path (`curl`, `agent-control`).
    package var program: String {
        let first = command.split(separator: " ").first.map(String.init) ?? ""
        return first.split(separator: "/").last.map(String.init) ?? first
    }

    /// The HTTP statuses the notes name (`200`, `503`, `409`).
    package var statusesNamed: Set<Int> {
        Set(notes.split { !$0.isNumber }.compactMap { Int($0) }.filter { (100...599).contains($0) })
    }

    package var description: String { "\((file as NSString).lastPathComponent):\(line): \(command)" }
}

/// The shell examples of Markdown files, for tests that run them as written.
package enum MarkdownExamples {
    /// Every command of every ```sh / ```bash block of `files`. In a block whose commands carry
    /// a `$ ` prompt, the other lines are output and skipped; comment lines and assignments
    /// are not commands.
    package static func shellCommands(in files: [String]) throws -> [MarkdownExample] {
        try files.flatMap { file in commands(in: try String(contentsOfFile: file, encoding: .utf8), file: file) }
    }

    /// The fenced blocks of `text` in `language`, with the line each starts on (its first line).
    package static func blocks(in text: String, languages: Set<String>) -> [(line: Int, lines: [String])] {
        var found: [(Int, [String])] = []
        var current: (language: String, start: Int, lines: [String])?
        for (index, line) in text.components(separatedBy: "\n").enumerated() {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.hasPrefix("```") {
                if let open = current {
                    if languages.contains(open.language) { found.append((open.start, open.lines)) }
                    current = nil
                } else {
                    current = (String(trimmed.dropFirst(3)).trimmingCharacters(in: .whitespaces).lowercased(), index + 2, [])
                }
            } else if current != nil {
                current!.lines.append(line)
            }
        }
        return found
    }

    static func commands(in text: String, file: String) -> [MarkdownExample] {
        var examples: [MarkdownExample] = []
        for (blockIndex, block) in blocks(in: text, languages: ["sh", "bash", "shell"]).enumerated() {
            let prompted = block.lines.contains { $0.hasPrefix("$ ") }
            var assignments: [String] = []
            var comments: [String] = []
            var index = 0
            while index < block.lines.count {
                let start = index
                var line = block.lines[index]
                // A trailing backslash continues the command on the next line.
                while line.hasSuffix("\\"), index + 1 < block.lines.count {
                    index += 1
                    line = String(line.dropLast()) + " " + block.lines[index].trimmingCharacters(in: .whitespaces)
                }
                index += 1
                if prompted {
                    guard line.hasPrefix("$ ") else { comments = []; continue }
                    line = String(line.dropFirst(2))
                }
                let (code, comment) = split(line)
                if code.isEmpty {
                    if let comment { comments.append(comment) } else { comments = [] }
                    continue
                }
                if isAssignment(code) {
                    assignments.append(code)
                    continue
                }
                examples.append(MarkdownExample(file: file, line: block.line + start, command: code,
                                                notes: (comments + [comment ?? ""]).joined(separator: " "),
                                                assignments: assignments, block: blockIndex))
                comments = []
            }
        }
        return examples
    }

    /// A line without its trailing comment (a `#` that starts a word outside quotes), and the
    /// comment.
    package static func split(_ line: String) -> (code: String, comment: String?) {
        var quote: Character?
        var previous: Character = " "
        for index in line.indices {
            let character = line[index]
            if let open = quote {
                if character == open { quote = nil }
            } else if character == "'" || character == "\"" {
                quote = character
            } else if character == "#", previous.isWhitespace {
                let code = line[..<index].trimmingCharacters(in: .whitespaces)
                return (code, String(line[line.index(after: index)...]).trimmingCharacters(in: .whitespaces))
            }
            previous = character
        }
        return (line.trimmingCharacters(in: .whitespaces), nil)
    }

    /// `NAME=value` or `export NAME=value` (several joined by `;`), and nothing else: not
    /// `NAME=value command`, which runs the command.
    package static func isAssignment(_ code: String) -> Bool {
        let segments = words(code)
        return !segments.isEmpty && segments.allSatisfy { segment in
            let words = segment.first == "export" ? Array(segment.dropFirst()) : segment
            guard words.count == 1, let equals = words[0].firstIndex(of: "=") else { return false }
            let name = words[0][..<equals]
            return !name.isEmpty && name.allSatisfy { $0.isLetter || $0.isNumber || $0 == "_" } && !name.first!.isNumber
        }
    }

    /// The words of each `;`-separated part of `code`, split at whitespace outside quotes and
    /// `$(…)`.
    package static func words(_ code: String) -> [[String]] {
        var segments: [[String]] = [[]]
        var word = ""
        var quote: Character?
        var depth = 0
        var previous: Character = " "
        func endWord() {
            if !word.isEmpty { segments[segments.count - 1].append(word) }
            word = ""
        }
        for character in code {
            defer { previous = character }
            if let open = quote {
                if character == open { quote = nil }
            } else if character == "'" || character == "\"" {
                quote = character
            } else if character == "(", previous == "$" {
                depth += 1
            } else if character == ")", depth > 0 {
                depth -= 1
            } else if depth == 0, character.isWhitespace {
                endWord()
                continue
            } else if depth == 0, character == ";" {
                endWord()
                segments.append([])
                continue
            }
            word.append(character)
        }
        endWord()
        return segments.filter { !$0.isEmpty }
    }

    /// The variables an assignment line sets (`H`, `A` of `H='…'; A=…`).
    package static func assignedNames(_ code: String) -> [String] {
        words(code).compactMap { segment in
            guard let word = segment.first == "export" ? segment.dropFirst().first : segment.first, word.contains("=") else { return nil }
            return String(word.prefix { $0 != "=" })
        }
    }
}
