@testable import AgentBase
@testable import AgentCommands
import AgentLoop
import AgentTestSupport
import AgentWork
import Foundation
import JSONSchema
import Testing

/// The registry's check decodes a request once, and the command runs with that value: the
/// request is not decoded again on the loop (it was, by the check and by the command).
@Suite(.ownThreads) struct CheckedRequestDecodingTests {
    /// A chat host that records what `chat_clear` was asked.
    final class RecordingChat: ChatCommandHost, CommandHosts {
        var cleared: [String?] = []
        var isStopping: Bool { false }
        func host<Host>(_ type: Host.Type) -> Host? { type == (any ChatCommandHost).self ? self as? Host : nil }
        func chat(_ request: ChatCommand.Request, caller: CommandCaller, respond: @escaping (Result<ChatCommand.Answer, CommandError>) -> Void) {}
        func voice(_ request: ChatVoiceCommand.Request, caller: CommandCaller, respond: @escaping (Result<ChatVoiceCommand.Answer, CommandError>) -> Void) {}
        func clear(conversation: String?, user: String?, respond: @escaping (Result<OKAnswer, CommandError>) -> Void) {
            cleared.append(conversation)
            respond(.success(OKAnswer()))
        }
        func summary(conversation: String, user: String?, respond: @escaping (Result<ChatSummaryCommand.Answer, CommandError>) -> Void) {}
        func setPreferences(_ request: ChatPreferencesSetCommand.Request, user: String,
                            respond: @escaping (Result<ChatPreferencesCommand.Answer, CommandError>) -> Void) {}
    }

    @Test func theCheckDecodesTheRequestIntoItsCommandsType() throws {
        let checked = try CommandRegistry.standard.check(["command": "task_run", "name": "report", "priority": "high", "at": "10m"]).get()
        let request = try #require(checked.decoded as? TaskRunCommand.Request)
        #expect(request.name == "report")
        #expect(request.priority == .high)
        #expect(request.at == "10m")
        // A request without members too (decoded once, when the registry is made).
        let status = try CommandRegistry.standard.check(["command": "status"]).get()
        #expect(status.decoded is NoFields)
        // And a route's members (HTTP).
        let command = try #require(CommandRegistry.standard.command(named: "chat_clear"))
        let cleared = try CommandRegistry.standard.check(["conversation": "ops"], for: command).get()
        #expect((cleared.decoded as? ChatClearCommand.Request)?.conversation == "ops")
    }

    @Test func theCommandRunsWithTheValueTheCheckDecodedNotTheJSON() throws {
        let command = try #require(CommandRegistry.standard.command(named: "chat_clear"))
        // Made by hand (the test is in the module's confidence): the JSON and the decoded
        // value differ, and the command must run with the decoded one.
        let request = CheckedRequest(command: command, json: ["command": "chat_clear", "conversation": "from-the-json"],
                                     decoded: ChatClearCommand.Request(conversation: "decoded"))
        // Commands run on the loop: this thread is the loop's for the call.
        let (cleared, answers) = EventLoop().isolated {
            let chat = RecordingChat()
            var answers: [JSONValue] = []
            CommandRegistry.standard.run(request, caller: CommandCaller(front: "control"), hosts: chat) { answers.append($0) }
            return (chat.cleared, answers)
        }
        #expect(cleared == ["decoded"])
        #expect(answers.first?["ok"] == true, "\(answers)")
    }
}
