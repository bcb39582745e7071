@testable import AgentCommands
@testable import AgentStore
import AgentTestSupport
import Foundation
import JSONSchema
import Logging
import Testing

/// A page of events stops at its byte bound as it stops at its limit: the newest events that
/// fit on the first page, the next ones after `after` on the others, and `next` pages on from
/// the last one given, so that paging still sees every event once.
@Suite(.ownThreads) struct EventPageSizeTests {
    @Test func aPageStopsAtItsByteBoundAndPagingOnSeesEveryEventOnce() throws {
        let folder = TestPaths.temporaryDirectory("event-pages")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let store = try AgentStore(path: folder + "/agent.sqlite", settings: StoreSettings(), logger: Logger(label: "test"))
        let now = Date().timeIntervalSince1970
        let filler = String(repeating: "x", count: 1_000)
        for n in 1...100 { store.append(type: "big", source: "test", time: now, payload: #"{"n": \#(n), "text": "\#(filler)"}"#) }
        store.close()
        let reader = try StoreReader(path: folder + "/agent.sqlite")

        let newest = try reader.events(types: ["big"], since: nil, limit: 100, newest: true, maxBytes: 10_000)
        #expect(newest.truncated)
        #expect((5...10).contains(newest.events.count), "\(newest.events.count)")
        #expect(newest.events.last?.payload.contains(#""n": 100,"#) == true, "the newest are kept")
        #expect(newest.events.map(\.id) == newest.events.map(\.id).sorted(), "oldest first")

        var seen: [Int64] = []
        var after: Int64 = 0
        while true {
            let page = try reader.events(types: ["big"], since: nil, afterID: after, limit: 100, newest: false, maxBytes: 10_000)
            seen += page.events.map(\.id)
            guard let last = page.events.last else { break }
            after = last.id
        }
        #expect(seen.count == 100)
        #expect(Set(seen).count == 100)
        // One event larger than the bound still comes: a page moves on.
        let one = try reader.events(types: ["big"], since: nil, limit: 100, newest: true, maxBytes: 10)
        #expect(one.events.count == 1 && one.truncated)
        #expect(try reader.events(types: ["big"], since: nil, limit: 100, newest: true, maxBytes: .max).truncated == false)

        // The command says so.
        let answer = try EventsCommand.read(EventsCommand.Request(type: "big", limit: 100), from: reader)
        #expect(answer.events.count == 100, "100 KB: within the answer's bound")
        #expect(answer.truncated == nil)
    }

    /// A conversation's history and transcript stop at the same bound: the newest lines that fit.
    @Test func aChatHistoryStopsAtItsByteBoundWithTheNewestLines() throws {
        let folder = TestPaths.temporaryDirectory("chat-pages")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let store = try AgentStore(path: folder + "/agent.sqlite", settings: StoreSettings(), logger: Logger(label: "test"))
        let filler = String(repeating: "y", count: 1_000)
        for n in 1...50 { store.recordChat(conversation: "ops", user: "ann", role: "user", source: "ann", text: "\(n) \(filler)") }
        store.close()
        let reader = try StoreReader(path: folder + "/agent.sqlite")
        let page = try reader.chat(conversation: "ops", limit: 100, maxBytes: 10_000)
        #expect(page.truncated)
        #expect((5...10).contains(page.lines.count), "\(page.lines.count)")
        #expect(page.lines.last?.text.hasPrefix("50 ") == true, "the newest are kept, oldest first")
        #expect(try reader.chat(conversation: "ops", limit: 100).count == 50)
        let answer = try ChatHistoryCommand.read(ChatHistoryCommand.Request(conversation: "ops"), from: reader)
        #expect(answer.lines.count == 50 && answer.truncated == nil, "50 KB: within the answer's bound")
    }
}
