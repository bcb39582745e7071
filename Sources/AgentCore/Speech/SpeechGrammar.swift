/// The JSGF grammar that makes short commands reliable: the logic adapters' usage examples,
/// spoken as written (numbers as any number from zero to a hundred), one alternative each.
/// What the grammar does not match is decoded with the free language model instead.
enum SpeechGrammar {
    /// The grammar, or nil when no example can be spoken with the dictionary's words.
    /// `known` says whether the dictionary has a word.
    static func jsgf(examples: [String], known: (String) -> Bool) -> String? {
        var alternatives: [String] = []
        for example in examples {
            guard let words = spoken(example), words.allSatisfy({ $0 == "<number>" || known($0) }) else { continue }
            let alternative = words.joined(separator: " ")
            if !alternatives.contains(alternative) { alternatives.append(alternative) }
        }
        guard !alternatives.isEmpty else { return nil }
        return "#JSGF V1.0;\ngrammar chat;\npublic <command> = " + alternatives.joined(separator: " | ") + ";\n" + NumberWords.rule + "\n"
    }

    /// An example's words as said: lower case, punctuation dropped, numbers a `<number>`; nil
    /// when a word has characters a grammar token cannot hold.
    static func spoken(_ example: String) -> [String]? {
        let words = example.lowercased().split { $0 == " " || $0 == "\t" || ",.?!;:\"()".contains($0) }.map(String.init)
        guard !words.isEmpty else { return nil }
        var result: [String] = []
        for word in words {
            if NumberWords.isNumber(word) {
                if result.last != "<number>" { result.append("<number>") }
                continue
            }
            guard word.unicodeScalars.allSatisfy({ ("a"..."z").contains($0) || $0 == "'" || $0 == "-" }) else { return nil }
            result.append(word)
        }
        return result
    }
}
