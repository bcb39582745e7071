import AgentBase
@testable import AgentCommands
import Testing

/// A refused reload lists at most ``ReloadCommand/mostErrorsShown`` errors and says how many
/// more there are: a settings file of 240,000 bad processes made an answer of 119 MB.
struct ReloadRefusalTests {
    @Test func aRefusalListsTheFirstErrorsAndCountsTheRest() {
        let issues = (1...1_000).map { SettingsIssue(file: "settings.json", pointer: "/processes/p\($0)/type", message: "unknown process type") }
        let refusal = ReloadCommand.refused(issues)
        let listed = refusal.json["errors"]?.arrayValue ?? []
        #expect(listed.count == ReloadCommand.mostErrorsShown + 1)
        #expect(listed.last?["message"]?.stringValue == "… and 800 more errors: `validate-settings` lists them all")
        #expect(ReloadCommand.refused(Array(issues.prefix(3))).json["errors"]?.arrayValue?.count == 3)
    }

    /// Each problem as `settings_change` and `validate` list theirs, so that a client reads the
    /// pointers the same way whichever command refused.
    @Test func aRefusalListsEachProblemWithItsFileAndPointer() {
        let refusal = ReloadCommand.refused([SettingsIssue(file: "/a/settings.json", pointer: "/tasks/echo/timeout", message: "expected a number, found \"x\"")])
        #expect(refusal.code == .invalid)
        #expect(refusal.message == "/a/settings.json: /tasks/echo/timeout: expected a number, found \"x\"")
        let first = refusal.json["errors"]?.arrayValue?.first
        #expect(first?["file"]?.stringValue == "/a/settings.json")
        #expect(first?["pointer"]?.stringValue == "/tasks/echo/timeout")
        #expect(first?["message"]?.stringValue == "expected a number, found \"x\"")
    }
}
