import AgentBase
@testable import AgentCommands
@testable import AgentRuntime
@testable import AgentStore
import AgentTestSupport
import Foundation
import JSONSchema
import Logging
import Testing

/// `chat_history` is a store read like `events` and `history`: read and encoded off the loop
/// (a history can be megabytes), its answer typed (`[Line]`). It was answered on the loop,
/// its rows carried as JSON so that the loop did not decode and encode them again.
@Suite(.ownThreads, .serialized) struct ChatHistoryStoreReadTests {
    @Test func chatHistoryIsAStoreRead() throws {
        let command = try #require(CommandRegistry.standard.command(named: "chat_history"))
        #expect(command.executor == .store)
        #expect(command.readStore != nil)
    }

    /// Through the command layer (the HTTP front's way) with nobody turning the loop: a read
    /// that went to the loop would never be answered.
    @Test func aChatHistoryIsAnsweredWithoutTheLoopWithItsTypedLines() async throws {
        let folder = TestPaths.temporaryDirectory("chat-history")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/agent.sqlite"
        let store = try AgentStore(path: path, settings: StoreSettings(), logger: Logger(label: "test"))
        for text in ["one", "two", "three"] { store.recordChat(conversation: "ops", role: "user", source: "", text: text) }
        store.recordChat(conversation: "other", role: "bot", source: "b", text: "elsewhere")
        store.close()

        let supervisor = CheckedRequestTests.supervisor()
        let center = supervisor.inbox.isolated { supervisor.makeCommandCenter(storePath: path) }
        let answer = try await Self.withDeadline(30) {
            await center.execute(["command": "chat_history", "conversation": "ops", "limit": 2], caller: CommandCenter.Caller(front: "http", user: "ann", role: "admin"))
        }
        let lines = try JSONValueDecoder().decode([ChatHistoryCommand.Line].self, from: try #require(answer?["lines"]))
        #expect(lines.map(\.text) == ["two", "three"], "the newest two, oldest first: \(String(describing: answer))")
        #expect(lines.allSatisfy { $0.role == "user" && $0.source == "" && $0.time.hasSuffix("Z") })
        // After a line, and with the store off.
        let after = try await Self.withDeadline(30) {
            await center.execute(["command": "chat_history", "conversation": "ops", "after": .number(JSONNumber(lines[0].id))], caller: CommandCenter.Caller(front: "http", user: "ann", role: "admin"))
        }
        #expect(after?["lines"]?.arrayValue?.count == 1, "\(String(describing: after))")
        let off = supervisor.inbox.isolated { CommandCenter(inbox: supervisor.inbox, storePath: nil, snapshot: { supervisor.takeSnapshot() }, handler: { _, _, _ in }) }
        let refused = try await Self.withDeadline(30) { await off.execute(["command": "chat_history"], caller: CommandCenter.Caller(front: "http", user: "ann", role: "admin")) }
        #expect(refused?["code"] == "unavailable", "\(String(describing: refused))")
        #expect(refused?["error"]?.stringValue?.contains("the store is off") == true, "\(String(describing: refused))")
    }

    /// `body`'s value, or nil when it has not come within `seconds` (then `body` is left
    /// waiting: a read sent to a loop nobody turns never ends).
    static func withDeadline<T: Sendable>(_ seconds: Double, _ body: @escaping @Sendable () async -> T) async throws -> T? {
        let waiting = LockedValue<CheckedContinuation<T?, Never>?>(nil)
        return await withCheckedContinuation { continuation in
            waiting.withLock { $0 = continuation }
            Task { let value = await body(); waiting.withLock { $0.take() }?.resume(returning: value) }
            Task {
                try? await Task.sleep(for: .seconds(seconds))
                waiting.withLock { $0.take() }?.resume(returning: nil)
            }
        }
    }
}

extension ChatHistoryStoreReadTests {
    /// An answer with a NUL (an adapter's or a model's) is kept whole, the NUL as U+FFFD: a
    /// text bound to SQLite ends at its first NUL, and the rest of the line was lost unsaid.
    @Test func aChatLineWithANulIsKeptWholeWithTheNulShownAsAReplacement() throws {
        let folder = TestPaths.temporaryDirectory("chat-nul")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/agent.sqlite"
        let store = try AgentStore(path: path, settings: StoreSettings(), logger: Logger(label: "test"))
        store.recordChat(conversation: "ops", role: "bot", source: "b", text: "before\u{0}after\u{0}")
        store.close()
        let lines = try StoreReader(path: path).chat(conversation: "ops", limit: 10)
        #expect(lines.map(\.text) == ["before\u{FFFD}after\u{FFFD}"])
    }
}
