@testable import AgentCore
import AgentTestSupport
import Testing

/// The `llm` adapter's system prompt: each placeholder filled in wherever it stands, as often
/// as it stands; anything else between braces kept as written; a value never searched again.
@Suite(.ownThreads) struct PromptTemplateTests {
    static func fill(_ placeholder: PromptTemplate.Placeholder) -> String {
        switch placeholder {
        case .user: "ada"
        case .now: "2026-11-30T04:00:00Z"
        case .tools: "status, restart"
        case .conversation: "ops"
        case .preferences: "language fr"
        }
    }

    @Test func everyPlaceholderIsFilledInWhereverAndAsOftenAsItStands() {
        let template = PromptTemplate("{{user}} at {{now}} in {{conversation}} ({{tools}}; {{preferences}}), again {{user}}")
        #expect(template.render(Self.fill) == "ada at 2026-11-30T04:00:00Z in ops (status, restart; language fr), again ada")
        #expect(PromptTemplate("{{user}}{{user}}").render(Self.fill) == "adaada")
        #expect(PromptTemplate("no placeholder").render(Self.fill) == "no placeholder")
        #expect(PromptTemplate("").render(Self.fill) == "")
    }

    @Test func bracesThatNameNoPlaceholderStayAsWritten() {
        for text in ["{{x}} and {{ user }}", "{{user", "user}}", "{{", "}}{{", "{{x {{", "é — {{unknown}} ✓"] {
            #expect(PromptTemplate(text).render(Self.fill) == text, "\(text)")
        }
        #expect(PromptTemplate("{{{user}}}").render(Self.fill) == "{ada}")
        #expect(PromptTemplate("{{x {{user}} y}}").render(Self.fill) == "{{x ada y}}")
        #expect(PromptTemplate("é — {{user}} ✓").render(Self.fill) == "é — ada ✓")
    }

    @Test func aValueFilledInIsNotSearchedAgainAndOnlyThePlaceholdersUsedAreAskedFor() {
        var asked: [PromptTemplate.Placeholder] = []
        let prompt = PromptTemplate("Hello {{user}}.").render { placeholder in
            asked.append(placeholder)
            return "{{now}}"
        }
        #expect(prompt == "Hello {{now}}.")
        #expect(asked == [.user])
    }
}
