@testable import AgentStore
import AgentTestSupport
import Foundation
import Logging
import Testing

/// A chat line the store cannot write — its disk is full, or it waits out the 5 s pause before
/// trying again — is lost like an event, and counted like one (`droppedChatLines`, status's
/// `store.dropped_chat_lines`), on a disk that fills up for real (a small tmpfs; needs root).
@Suite(.ownThreads, .serialized) struct ChatLineDropTests {
    /// Waits for the writer to have taken everything queued before; true when it was written.
    static func written(_ store: AgentStore) -> Bool {
        let outcome = Outcome()
        store.setChatPreferences(user: "probe", value: "{}") { outcome.set($0) }
        return outcome.wait()
    }

    final class Outcome: @unchecked Sendable {
        private let done = DispatchSemaphore(value: 0)
        private var value = false
        func set(_ written: Bool) {
            value = written
            done.signal()
        }
        func wait() -> Bool {
            _ = done.wait(timeout: .now() + 120)
            return value
        }
    }

    /// Fills the store's disk (already full but for SQLite's slack) with what `queue` adds, 32
    /// KiB at a time, until a batch fails and the store says it is degraded (at most 400).
    static func queueUntilDegraded(_ store: AgentStore, _ queue: (_ big: String) -> Void) {
        let big = String(repeating: "x", count: 32 << 10)
        var queued = 0
        while store.statistics.degraded == nil, queued < 400 {
            queue(big)
            queued += 1
            _ = written(store)
        }
    }

    @Test func chatLinesTheStoreCannotWriteAreCounted() throws {
        let disk = try TmpfsDisk(size: "4m", name: "chat-drop")
        defer { disk.unmount() }
        let path = disk.path + "/agent.sqlite"
        let store = try AgentStore(path: path, settings: StoreSettings(), logger: Logger(label: "test"))
        store.recordChat(conversation: "ops", user: "ann", role: "user", source: "ann", text: "kept")
        #expect(Self.written(store))
        #expect(store.statistics.droppedChatLines == 0)

        // The disk fills: lines are queued until one batch fails; from then on the store pauses.
        #expect(disk.fill() > 0)
        Self.queueUntilDegraded(store) { store.recordChat(conversation: "ops", user: "ann", role: "user", source: "ann", text: $0) }
        #expect(store.statistics.degraded?.contains("full") == true, "\(store.statistics)")
        let failed = store.statistics.droppedChatLines
        #expect(failed >= 1, "the failed batch's line was not counted: \(store.statistics)")

        // Queued now (in the retry pause, or to a write that fails again): each one is counted.
        for n in 1...3 { store.recordChat(conversation: "ops", user: "bob", role: "user", source: "bob", text: "lost \(n)") }
        #expect(!Self.written(store), "the store wrote on a full disk")
        #expect(store.statistics.droppedChatLines == failed + 3, "\(store.statistics)")

        // Room again: the next lines are written, and the count stays.
        try disk.free()
        #expect(WorkflowAgent.wait(timeout: 60) { Self.written(store) }, "\(store.statistics)")
        store.recordChat(conversation: "ops", user: "bob", role: "user", source: "bob", text: "after")
        #expect(Self.written(store))
        #expect(store.statistics.droppedChatLines == failed + 3, "\(store.statistics)")
        store.close()
        let lines = try StoreReader(path: path).chat(conversation: "ops", user: "bob", limit: 100).map(\.text)
        #expect(lines.contains("after") && !lines.contains { $0.hasPrefix("lost") }, "\(lines)")
    }
}
