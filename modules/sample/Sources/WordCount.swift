import AgentModuleKit

/// A task handler: counts the words, lines and characters of a text and names its most
/// frequent words (`"type": "sample.word_count"`).
struct WordCount: TaskHandler {
    struct Settings: SettingsDeclaration {
        @Setting(description: "Count \"The\" and \"the\" as different words.")
        var caseSensitive = false
    }

    /// Declared once: the input's decoding and its JSON Schema come from these lines.
    struct Input: SettingsDeclaration {
        @Setting(description: "The text to count.")
        var text: String
        @Setting(minimum: 0, maximum: 100, description: "How many of the most frequent words to list.")
        var top = 3
    }

    struct Output: Encodable, Sendable {
        struct Word: Encodable, Sendable {
            var word: String
            var count: Int
        }
        var words: Int
        var lines: Int
        var characters: Int
        var top: [Word]
    }

    static let typeName = "word_count"
    static let description = "Counts the words, lines and characters of a text and names its most frequent words."
    static var outputSchema: Schema? {
        .object([
            "words": .integer(), "lines": .integer(), "characters": .integer(),
            "top": .array(of: .object(["word": .string(), "count": .integer()])),
        ])
    }

    let settings: Settings

    init(settings: Settings) { self.settings = settings }

    func run(input: Input, context: TaskContext) async throws -> Output {
        let words = input.text.split { !$0.isLetter && !$0.isNumber && $0 != "'" }
            .map { settings.caseSensitive ? String($0) : $0.lowercased() }
        var counts: [String: Int] = [:]
        for word in words { counts[word, default: 0] += 1 }
        let top = counts.sorted { $0.value != $1.value ? $0.value > $1.value : $0.key < $1.key }
            .prefix(input.top).map { Output.Word(word: $0.key, count: $0.value) }
        let lines = input.text.isEmpty ? 0 : input.text.split(separator: "\n", omittingEmptySubsequences: false).count
        return Output(words: words.count, lines: lines, characters: input.text.count, top: Array(top))
    }
}
