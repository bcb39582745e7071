@testable import AgentCommands
import AgentStore
import AgentTestSupport
import Testing

/// A conversation's lines written out (``ChatTranscript``) and summed up without a model
/// (``ChatSummary``): who said what, the alerts, the tool calls and their outcome.
@Suite(.ownThreads) struct ChatTranscriptTests {
    static let lines = [
        ChatLine(id: 1, time: 1_700_000_000, conversation: "ops", user: "ann", role: "user", source: "", text: "restart *trades* [now](http://x)"),
        ChatLine(id: 2, time: 1_700_000_001, conversation: "ops", user: "ann", role: "tool", source: "process_restart", text: "ok"),
        ChatLine(id: 3, time: 1_700_000_002, conversation: "ops", user: "ann", role: "bot", source: "llm", text: "Restarted.\nIt runs."),
        ChatLine(id: 4, time: 1_700_000_003, conversation: "ops", user: nil, role: "alert", source: "busy", text: "X/Y: 6 trade events"),
        ChatLine(id: 5, time: 1_700_000_004, conversation: "ops", user: "bob", role: "user", source: "voice", text: "stop it", confidence: 0.8),
        ChatLine(id: 6, time: 1_700_000_005, conversation: "ops", user: "bob", role: "tool", source: "process_stop", text: "error: bob has the read role"),
        ChatLine(id: 7, time: 1_700_000_006, conversation: "ops", user: "bob", role: "bot", source: "llm", text: "I may not."),
    ]

    @Test func theTextTranscriptHasOneLinePerMessageWithItsSpeaker() {
        let text = ChatTranscript.text(Self.lines)
        #expect(text.hasPrefix("2023-11-14T22:13:20.000Z ann: restart *trades* [now](http://x)\n"), "\(text)")
        #expect(text.contains(" tool process_restart for ann: ok\n"))
        #expect(text.contains(" bot (llm): Restarted.\n    It runs.\n"), "a message's own line break is indented: \(text)")
        #expect(text.contains(" alert from busy: X/Y: 6 trade events\n"))
        #expect(text.contains(" bob (voice): stop it\n"))
    }

    @Test func theMarkdownTranscriptEscapesWhatAMessageWrites() {
        let markdown = ChatTranscript.markdown(Self.lines, conversation: "ops #1")
        #expect(markdown.hasPrefix("# Conversation ops \\#1\n\n7 message(s), 2023-11-14T22:13:20.000Z to 2023-11-14T22:13:26.000Z.\n\n"), "\(markdown)")
        #expect(markdown.contains("- **ann** (2023-11-14T22:13:20.000Z): restart \\*trades\\* \\[now\\]\\(http://x\\)\n"), "\(markdown)")
        #expect(markdown.contains("Restarted\\.  \n  It runs\\."), "\(markdown)")
        let cut = ChatTranscript.markdown(Array(Self.lines.suffix(2)), conversation: "ops", truncated: true)
        #expect(cut.hasPrefix("# Conversation ops\n\nThe newest 2 message(s) (there are more), 2023-11-14T22:13:25.000Z to "), "\(cut)")
    }

    @Test func theSummaryCountsWhoTopicsAlertsAndActions() {
        let summary = ChatSummary(Self.lines)
        #expect(summary.first == "2023-11-14T22:13:20.000Z" && summary.last == "2023-11-14T22:13:26.000Z")
        #expect(summary.users == ["ann", "bob"])
        #expect(summary.messages == ["user": 2, "tool": 2, "bot": 2, "alert": 1])
        #expect(summary.topics == [ChatSummary.Topic(adapter: "llm", messages: 2)])
        #expect(summary.alerts.map(\.source) == ["busy"])
        #expect(summary.actions.map { "\($0.tool) \($0.user ?? "-") \($0.outcome) \($0.detail)" }
                == ["process_restart ann ok ok", "process_stop bob error bob has the read role"])
        #expect(summary.text == "7 message(s) from 2023-11-14T22:13:20.000Z to 2023-11-14T22:13:26.000Z, from ann, bob. Topics: llm (2). "
                + "1 alert(s), the last from busy: X/Y: 6 trade events Actions: process_restart (ok), process_stop (error); 1 failed.")
        #expect(ChatSummary([]).text == "Nothing was said in this conversation.")
    }
}
