import Foundation

/// Scores how well a message fits each adapter's example sentences: naive Bayes over words
/// (each adapter's examples against the others'), weighted by how many of the message's words
/// the adapter has seen at all, so that a message no adapter knows scores low everywhere.
struct NaiveBayesScorer: Sendable {
    private let counts: [[String: Int]]
    private let totals: [Int]
    private let vocabularySize: Int

    init(examples: [[String]]) {
        counts = examples.map { sentences in
            var words: [String: Int] = [:]
            for sentence in sentences { for word in Self.words(sentence) { words[word, default: 0] += 1 } }
            return words
        }
        totals = counts.map { $0.values.reduce(0, +) }
        vocabularySize = max(1, Set(counts.flatMap(\.keys)).count)
    }

    static let ignored: Set<String> = ["the", "a", "an", "is", "are", "of", "to", "in", "me", "please", "i", "you", "my", "for", "on", "be", "it"]

    static func words(_ text: String) -> [String] {
        text.lowercased().split { !$0.isLetter && !$0.isNumber }.map(String.init).filter { !ignored.contains($0) }
    }

    /// One confidence in 0...1 per adapter.
    func scores(_ message: String) -> [Double] {
        let words = Self.words(message)
        guard !words.isEmpty, !counts.isEmpty else { return counts.map { _ in 0 } }
        let logLikelihoods = counts.indices.map { index -> Double in
            words.reduce(0.0) { sum, word in
                sum + log((Double(counts[index][word] ?? 0) + 1) / (Double(totals[index]) + Double(vocabularySize)))
            }
        }
        let best = logLikelihoods.max() ?? 0
        let weights = logLikelihoods.map { exp($0 - best) }
        let sum = weights.reduce(0, +)
        return counts.indices.map { index in
            let coverage = Double(words.filter { counts[index][$0] != nil }.count) / Double(words.count)
            return weights[index] / sum * coverage
        }
    }
}
