@testable import AgentBase
@testable import AgentCommands
import AgentCore
@testable import AgentSupervision
import AgentStore
import AgentTestSupport
import Foundation
import JSONSchema
import Logging
import Testing
@testable import AgentRuntime

/// Changes of one user's preferences from several fronts at once are made one after the other
/// (``ChatRelay/setPreferences(_:user:respond:)``): each reads what the one before wrote, so
/// none is lost. The changes are all handed over in one turn of the supervisor's loop, before
/// any of them is read or written — the overlap is made, not hoped for — against a real store.
@Suite(.ownThreads, .serialized) struct ChatPreferencesOrderTests {
    final class Answers: @unchecked Sendable {
        var results: [Result<ChatPreferencesCommand.Answer, CommandError>] = []
    }

    @Test func changesOfOneUserAtOnceAreAllKept() throws {
        let folder = TestPaths.temporaryDirectory("chat-preferences-order")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let store = try AgentStore(path: folder + "/agent.sqlite", settings: StoreSettings(), logger: Logger(label: "test"))
        defer { store.close() }
        let supervisor = Supervisor.make(
            configuration: SupervisorConfiguration(workerPath: TestPaths.products + "/agent-worker", environment: ProcessInfo.processInfo.environment),
            processes: [], console: ConsoleOutput(json: false, showEvents: false, fd: -1), logger: Logger(label: "test"))
        let answers = Answers()
        let count = 16
        supervisor.inbox.isolated {
            supervisor.chat.attach(store: store)
            // Two fronts' changes of ann's preferences, and one of bob's between them.
            for n in 0..<count {
                let request = n == 3 ? ChatPreferencesSetCommand.Request(language: "fr", custom: ["k\(n)": .number(JSONNumber(n))])
                    : ChatPreferencesSetCommand.Request(custom: ["k\(n)": .number(JSONNumber(n))])
                supervisor.chat.setPreferences(request, user: "ann") { answers.results.append($0) }
                if n == 5 { supervisor.chat.setPreferences(ChatPreferencesSetCommand.Request(units: "imperial"), user: "bob") { answers.results.append($0) } }
            }
            #expect(answers.results.isEmpty, "a change was answered before the loop turned")
        }
        supervisor.run(until: { answers.results.count == count + 1 }, timeout: 120)
        #expect(answers.results.count == count + 1)
        let answered = answers.results.compactMap { try? $0.get() }
        #expect(answered.count == count + 1, "\(answers.results)")

        // Each of ann's answers has every change before it; the last one has them all.
        let ann = answered.filter { $0.user == "ann" }
        for (index, answer) in ann.enumerated() {
            let keys = Set((answer.preferences["custom"]?.objectValue ?? [:]).keys)
            #expect(keys == Set((0...index).map { "k\($0)" }), "answer \(index): \(keys.sorted())")
        }
        let kept = ChatPreferences(stored: try StoreReader(path: store.path).chatPreferences(user: "ann"))
        #expect(Set((kept.custom ?? [:]).keys) == Set((0..<count).map { "k\($0)" }), "\(String(describing: kept))")
        #expect(kept.language == "fr", "\(String(describing: kept))")
        let bob = ChatPreferences(stored: try StoreReader(path: store.path).chatPreferences(user: "bob"))
        #expect(bob.units == "imperial" && (bob.custom ?? [:]).isEmpty, "\(String(describing: bob))")
    }
}
