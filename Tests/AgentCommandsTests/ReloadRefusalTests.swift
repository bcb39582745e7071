@testable import AgentCommands
import Testing

/// A refused reload lists at most ``ReloadCommand/mostErrorsShown`` errors and says how many
/// more there are: a settings file of 240,000 bad processes made an answer of 119 MB.
struct ReloadRefusalTests {
    @Test func aRefusalListsTheFirstErrorsAndCountsTheRest() {
        let errors = (1...1_000).map { "settings.json: /processes/p\($0)/type: unknown process type" }
        let refusal = ReloadCommand.refused(errors)
        let listed = refusal.json["errors"]?.arrayValue ?? []
        #expect(listed.count == ReloadCommand.mostErrorsShown + 1)
        #expect(listed.first?.stringValue == errors[0])
        #expect(listed.last?.stringValue == "… and 800 more errors: `validate-settings` lists them all")
        #expect(ReloadCommand.refused(Array(errors.prefix(3))).json["errors"]?.arrayValue?.count == 3)
    }
}
