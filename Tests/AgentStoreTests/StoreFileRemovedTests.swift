@testable import AgentStore
import AgentTestSupport
import Foundation
import GRDB
import Logging
import Testing

/// A store whose file was removed (or replaced) under a running agent went on writing into the
/// removed file and acknowledging it: all of it was gone at the next start, which made a new,
/// empty store. The writer notices within a second, stops acknowledging, and says what to do.
@Suite(.ownThreads) struct StoreFileRemovedTests {
    /// Writes until one is refused (the check looks once a second); whether one was.
    static func writesUntilRefused(_ store: AgentStore) -> Bool {
        let deadline = Date().addingTimeInterval(120)
        while Date() < deadline {
            if !ChatLineDropTests.written(store) { return true }
            Thread.sleep(forTimeInterval: 0.05)
        }
        return false
    }

    /// A store written once, its file then removed (and `replacement` written in its place),
    /// written to until a write is refused; `body` gets the store, its folder and its path.
    static func removedUnderIt(_ name: String, replacement: Data? = nil, _ body: (AgentStore, String, String) throws -> Void) throws {
        let directory = TestPaths.temporaryDirectory(name)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/agent.sqlite"
        let store = try AgentStore(path: path, settings: StoreSettings(), logger: Logger(label: "test"))
        defer { store.close() }
        #expect(ChatLineDropTests.written(store))
        try FileManager.default.removeItem(atPath: path)
        if let replacement { try replacement.write(to: URL(fileURLWithPath: path)) }
        #expect(Self.writesUntilRefused(store))
        try body(store, directory, path)
    }

    @Test func aRemovedStoreFileStopsTheAcknowledgementsAndSaysHowToKeepItsHistory() throws {
        try Self.removedUnderIt("store-removed") { store, directory, path in
            let reason = store.statistics.degraded ?? ""
            #expect(reason.contains("the database file \(path) was removed while the agent ran") && reason.contains("agent-control restart"), "\(reason)")
            #expect(reason.contains("cp /proc/\(getpid())/fd/"), "\(reason)")
            // The copy the message advises holds what was written: the WAL was checkpointed into it.
            let source = try #require(reason.range(of: "cp ").map { reason[$0.upperBound...].prefix { $0 != " " } })
            let copy = directory + "/saved.sqlite"
            // Its content, as `cp` reads it (FileManager would copy the /proc link itself).
            try Data(contentsOf: URL(fileURLWithPath: String(source))).write(to: URL(fileURLWithPath: copy))
            let saved = try DatabaseQueue(path: copy)
            #expect(try saved.read { try String.fetchOne($0, sql: "SELECT value FROM chat_preferences WHERE user = 'probe'") } == "{}")
            // Nor once the retry is due: the path is looked at again, and the write fails again.
            let deadline = Date().addingTimeInterval(120)
            while store.statistics.writeErrors < 2, Date() < deadline { #expect(!ChatLineDropTests.written(store)) }
            #expect(store.statistics.writeErrors >= 2, "\(store.statistics)")
            #expect(!FileManager.default.fileExists(atPath: path))
        }
    }

    @Test func aReplacedStoreFileIsNotWrittenThroughTheOldOne() throws {
        try Self.removedUnderIt("store-replaced", replacement: Data("another file".utf8)) { store, _, _ in
            #expect(store.statistics.degraded?.contains("was replaced by another file") == true, "\(store.statistics)")
        }
    }
}
