import AgentTestSupport
import Testing
@testable import AgentCore

/// The grammar made from the adapters' usage examples, and numbers back as digits.
@Suite(.ownThreads) struct SpeechGrammarTests {
    @Test func examplesBecomeAlternativesWithAnyNumber() throws {
        let grammar = try #require(SpeechGrammar.jsgf(examples: [
            "how many trades in the last 5 minutes?", "count the trades", "Count the trades!", "what's the cpu usage?", "résumé please",
        ]) { $0 != "usage" })
        #expect(grammar.contains("public <command> = how many trades in the last <number> minutes | count the trades;"), "\(grammar)")
        #expect(grammar.contains("<number> = zero | one"))
        #expect(SpeechGrammar.jsgf(examples: ["xyzzy"]) { _ in false } == nil)
    }

    @Test func spokenNumbersBecomeDigits() {
        #expect(NumberWords.digits(in: "how many trades in the last five minutes") == "how many trades in the last 5 minutes")
        #expect(NumberWords.digits(in: "the last twenty five minutes") == "the last 25 minutes")
        #expect(NumberWords.digits(in: "the last a hundred hours") == "the last 100 hours")
        #expect(NumberWords.digits(in: "two hundred and one") == "200 and 1")
        #expect(NumberWords.digits(in: "five five") == "5 5")
        #expect(NumberWords.digits(in: "status") == "status")
        #expect(NumberWords.digits(in: "") == "")
    }
}
