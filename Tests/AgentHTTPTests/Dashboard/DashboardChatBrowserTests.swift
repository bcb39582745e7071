import AgentTestSupport
import Foundation
import Testing

/// The dashboard's chat page in a real browser (Chromium over WebDriver) against a real agent
/// whose chatbot's `llm` adapter talks to the test suite's model stub: a user with the read
/// role gets the form (any role may chat) and sees the answer grow as the model writes it —
/// the stub holds the rest of its answer until the page shows the first pieces.
@Suite(.ownThreads, .serialized) struct DashboardChatBrowserTests {
    static func settings(_ stub: ChatCompletionStub) -> String {
        """
        {
          "enabled_modules": [],
          "http": {"listen": "127.0.0.1:0", "users": {"rita": {"password_hash": "HASH", "role": "read"}}},
          "processes": {"chat": {"type": "chatbot", "logic_adapters": [{"type": "llm", "base_url": "\(stub.baseURL)", "model": "stub", "confidence": 1, "history": 0}]}}
        }
        """
    }

    @Test(.enabled(if: WebDriver.unavailableReason == nil, "needs a browser: \(WebDriver.unavailableReason ?? "")"))
    func aReaderChatsAndSeesTheAnswerAsItComes() throws {
        let stub = try ChatCompletionStub()
        defer { stub.stop() }
        stub.script(.streamedHeld(["Hel", "lo"], rest: [" wor", "ld."]))
        let login = try DashboardLogin(settings: Self.settings(stub), page: "/chat", showing: "#chat-form", user: "rita")
        defer { login.close() }
        let browser = login.browser
        #expect(try browser.find("#voice-form") != nil, "the reader has no voice upload")
        #expect(try browser.find(#"form[action="/chat/clear"]"#) == nil, "clearing a conversation stays the admin's")
        try browser.type("hi", into: try browser.element("#chat-text"))
        try browser.click(try browser.element("#chat-form button"))
        // The first pieces on the page while the model holds the rest.
        do {
            try browser.wait("the first pieces", timeout: 60) { (try? browser.text("#chat-streaming")) == "Hello" }
        } catch {
            Issue.record("\(error): the history shows \((try? browser.text("#chat-history")) ?? "nothing")")
            throw error
        }
        stub.release()
        try browser.wait("the whole answer", timeout: 60) { try browser.find(#"#chat-history [data-done="true"]"#) != nil }
        #expect(try browser.text(#"#chat-history [data-done="true"]"#) == "Hello world.")
        #expect(!stub.holdExpired)
        // The history the page renders keeps the exchange (the answer whole).
        try browser.navigate(to: login.base + "/chat")
        try browser.wait("the history") { try browser.text("#chat-history").contains("Hello world.") }
        #expect(try browser.text("#chat-history").contains("hi"))
    }
}
