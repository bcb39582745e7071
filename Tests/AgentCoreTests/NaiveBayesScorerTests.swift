import AgentTestSupport
import Testing
@testable import AgentCore

@Suite(.ownThreads) struct NaiveBayesScorerTests {
    let scorer = NaiveBayesScorer(examples: [
        ["how many trades in the last 5 minutes?", "count the trades"],
        ["what is the cpu usage?", "what is the memory usage?"],
        ["what can you do", "help"],
    ])

    @Test func theAdapterWhoseExamplesFitTheMessageWins() {
        let scores = scorer.scores("How many trades were there in the last hour?")
        #expect(scores.firstIndex(of: scores.max()!) == 0)
        #expect(scores[0] > 0.3, "above the default confidence threshold")
        let cpu = scorer.scores("what's the CPU usage now")
        #expect(cpu.firstIndex(of: cpu.max()!) == 1)
    }

    @Test func aMessageNoAdapterKnowsScoresLowEverywhere() {
        #expect(scorer.scores("banana smoothie recipe").allSatisfy { $0 == 0 })
        #expect(scorer.scores("").allSatisfy { $0 == 0 })
    }

    @Test func scoresAreProbabilitiesWeightedByCoverage() {
        let scores = scorer.scores("help me count")
        #expect(scores.allSatisfy { (0...1).contains($0) })
        #expect(scores.reduce(0, +) <= 1.0001)
    }
}
