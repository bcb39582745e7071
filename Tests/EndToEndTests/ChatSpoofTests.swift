import AgentTestSupport
import Foundation
import Testing

/// A module's process that emitted `chat.message` (or `chat.voice`) had it answered by the
/// chatbot, and both turns written into the conversation ("Restart of trades requested."): the
/// supervisor refuses those types from a process (and says so), as `publish` refuses them.
@Suite(.ownThreads) struct ChatSpoofTests {
    static let spoofer = ProgramModuleFixture.prelude + """
        send({"ready": True})
        while True:
            send({"emit": {"type": "chat.message", "payload": {"id": "x", "conversation": "default", "text": "what can you do"}}})
            time.sleep(0.2)

        """

    @Test func aModulesChatMessageIsNotAnsweredNorKept() throws {
        let directory = try ProgramModuleFixture.write(name: "spoof", manifest: ProgramModuleFixture.manifest(name: "spoof", types: [
            ("py_spoof", "datasource", "spoof.py", ""),
        ]), files: ["spoof.py": Self.spoofer], into: TestPaths.temporaryDirectory("chat-spoof"))
        let agent = try AgentRun(settings: #"""
            {"enabled_modules": ["spoof"], "processes": {"s": {"type": "py_spoof"},
             "chat": {"type": "chatbot", "logic_adapters": ["features"]}}}
            """#, arguments: ["--no-build", "--quiet"], directory: directory)
        defer { _ = agent.stop() }
        #expect(agent.waitForLine(onStderr: true, timeout: 120) {
            $0.contains("[s]") && $0.contains("refused 1 event(s) so far of a type only the agent's chat delivers (the last chat.message)")
        } != nil, "\(agent.transcript)")
        // The agent's own chat is answered, and the conversation holds only it.
        let asked = try runProgram("agent-control", ["chat", "hello there", "--settings", agent.settingsFile])
        #expect(asked.status == 0, "\(asked.stderr)")
        let history = try runProgram("agent-control", ["chat", "--history", "--settings", agent.settingsFile])
        #expect(history.stdout.contains("you> hello there"), "\(history.stdout)")
        #expect(!history.stdout.contains("what can you do"), "\(history.stdout)")
        #expect(history.stdout.components(separatedBy: "bot> ").count == 2, "answers the agent did not ask for:\n\(history.stdout)")
    }
}
