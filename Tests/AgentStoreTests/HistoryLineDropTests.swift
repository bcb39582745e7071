@testable import AgentStore
import AgentTestSupport
import Foundation
import Logging
import Testing

/// A history line the store cannot write — its disk is full, or it waits out the 5 s pause
/// before trying again — is lost, and counted (`droppedHistoryLines`, status's
/// `store.dropped_history_lines`), on a disk that fills up for real (a small tmpfs; needs root).
@Suite(.ownThreads, .serialized) struct HistoryLineDropTests {
    static func line(_ event: String) -> HistoryEntry {
        HistoryEntry(time: Date().timeIntervalSince1970, process: "worker", event: event, detail: "a line")
    }

    @Test func historyLinesTheStoreCannotWriteAreCounted() throws {
        let disk = try TmpfsDisk(size: "4m", name: "history-drop")
        defer { disk.unmount() }
        let path = disk.path + "/agent.sqlite"
        let store = try AgentStore(path: path, settings: StoreSettings(), logger: Logger(label: "test"))
        store.record(Self.line("started"))
        #expect(ChatLineDropTests.written(store))
        #expect(store.statistics.droppedHistoryLines == 0)

        // The disk fills: lines (each with a big detail, to fill it) until a batch fails.
        #expect(disk.fill() > 0)
        ChatLineDropTests.queueUntilDegraded(store) {
            store.record(HistoryEntry(time: Date().timeIntervalSince1970, process: "worker", event: "exit", detail: $0))
        }
        #expect(store.statistics.degraded?.contains("full") == true, "\(store.statistics)")
        let failed = store.statistics.droppedHistoryLines
        #expect(failed >= 1, "the failed batch's line was not counted: \(store.statistics)")

        // Queued now (in the retry pause, or to a write that fails again): each one is counted,
        // a start's lines (which wait for a group commit) as a command's audit.
        for n in 1...3 { store.record(Self.line("lost \(n)"), atOnce: n == 1) }
        #expect(!ChatLineDropTests.written(store), "the store wrote on a full disk")
        #expect(store.statistics.droppedHistoryLines == failed + 3, "\(store.statistics)")

        // Room again: the next lines are written, and the count stays.
        try disk.free()
        #expect(WorkflowAgent.wait(timeout: 60) { ChatLineDropTests.written(store) }, "\(store.statistics)")
        store.record(Self.line("after"))
        #expect(ChatLineDropTests.written(store))
        #expect(store.statistics.droppedHistoryLines == failed + 3, "\(store.statistics)")
        store.close()
        let events = try StoreReader(path: path).history(process: "worker", limit: 100).map(\.event)
        #expect(events.contains("after") && !events.contains { $0.hasPrefix("lost") }, "\(events)")
    }
}
