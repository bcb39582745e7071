import AgentCore
@testable import AgentStore
import AgentTestSupport
import Foundation
import GRDB
import Logging
import Testing

/// `store.retention.max_bytes`: past it the oldest events go, so that a flood of large events
/// (a token with the `publish` grant, a chatty module) cannot fill the disk.
@Suite(.ownThreads) struct StoreSizeRetentionTests {
    static let limit = 2 << 20
    /// A payload of about 10 KB, numbered.
    static func payload(_ n: Int) -> String { #"{"n":\#(n),"pad":"\#(String(repeating: "x", count: 10_000))"}"# }

    static func settings(maximumBytes: Int?) -> StoreSettings {
        var settings = StoreSettings()
        settings.maximumBytes = maximumBytes
        return settings
    }

    /// Waits for the retention's pass to end (it sets `bytes_in_use` last; a pass yields to
    /// the queue after 100 ms, and a close does not wait for the rest of it), then closes.
    static func closeAfterThePass(_ store: AgentStore) throws {
        let deadline = Date().addingTimeInterval(120)
        while store.statistics.bytesInUse == 0, Date() < deadline { usleep(2_000) }
        try #require(store.statistics.bytesInUse > 0, "the retention's pass ended")
        store.close(timeout: 120)
    }

    /// The bytes in use and the events' numbers, read through a connection of its own.
    static func contents(_ path: String) throws -> (inUse: Int, numbers: [Int]) {
        let reader = try DatabaseQueue(path: path)
        return try reader.read { db in
            let numbers = try Int.fetchAll(db, sql: "SELECT json_extract(payload, '$.n') FROM events ORDER BY id")
            return (try AgentStore.bytesInUse(db), numbers)
        }
    }

    @Test func eventsPastMaxBytesAreDeletedOldestFirstAtTheStartAndTheNewestKept() throws {
        let folder = TestPaths.temporaryDirectory("size-start")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/agent.sqlite"
        let now = Date().timeIntervalSince1970
        let unlimited = try AgentStore(path: path, settings: Self.settings(maximumBytes: nil), logger: Logger(label: "test"))
        for n in 0..<800 { unlimited.append(type: "blob", source: "feed", time: now, payload: Self.payload(n)) }
        unlimited.close(timeout: 120)
        let before = try Self.contents(path)
        #expect(before.numbers.count == 800)
        #expect(before.inUse > 4 * Self.limit, "8 MB of events: \(before.inUse)")

        // The first pass runs at the start.
        let store = try AgentStore(path: path, settings: Self.settings(maximumBytes: Self.limit), logger: Logger(label: "test"))
        try Self.closeAfterThePass(store)
        let after = try Self.contents(path)
        #expect(after.inUse <= Self.limit, "\(after.inUse)")
        #expect(after.numbers.last == 799, "the newest event is kept")
        #expect(after.numbers == Array((800 - after.numbers.count)..<800), "the oldest went first, none in between")
        // Not emptied either: the pass deletes about the excess (each 10 KB row here takes a
        // 16 KB page of its own), not a whole chunk.
        #expect(after.inUse > Self.limit * 3 / 4, "\(after.inUse) in use, \(after.numbers.count) kept of 800")
        #expect(store.statistics.expired == 800 - after.numbers.count)
        // What status and the metric show: the size the pass left.
        #expect(store.statistics.bytesInUse > Self.limit / 2 && store.statistics.bytesInUse <= Self.limit, "\(store.statistics.bytesInUse)")
    }

    @Test func smallEventsManyToAPageAreDeletedInChunksDownToTheLimitNotBelowHalfOfIt() throws {
        let folder = TestPaths.temporaryDirectory("size-small")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/agent.sqlite"
        let now = Date().timeIntervalSince1970
        let unlimited = try AgentStore(path: path, settings: Self.settings(maximumBytes: nil), logger: Logger(label: "test"))
        for n in 0..<60_000 { unlimited.append(type: "tick", source: "clock", time: now, payload: #"{"n":\#(n),"price":101.25,"side":"buy"}"#) }
        unlimited.close(timeout: 120)
        #expect(try Self.contents(path).inUse > 2 * Self.limit)

        let store = try AgentStore(path: path, settings: Self.settings(maximumBytes: Self.limit), logger: Logger(label: "test"))
        try Self.closeAfterThePass(store)
        let after = try Self.contents(path)
        #expect(after.inUse <= Self.limit, "\(after.inUse)")
        #expect(after.inUse > Self.limit / 2, "\(after.inUse) in use, \(after.numbers.count) kept")
        #expect(after.numbers == Array((60_000 - after.numbers.count)..<60_000))
    }

    /// SQLite numbers a row of an empty table 1: a retention that deleted every event made ids
    /// start over, and `events --follow` (which asks for ids after the last it saw) went silent.
    @Test(arguments: ["age", "size"])
    func eventIdsOnlyGrowWhenTheRetentionWouldDeleteEveryEvent(limit: String) throws {
        let folder = TestPaths.temporaryDirectory("ids-\(limit)")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/agent.sqlite"
        let hourAgo = Date().timeIntervalSince1970 - 3600
        let unlimited = try AgentStore(path: path, settings: Self.settings(maximumBytes: nil), logger: Logger(label: "test"))
        // By size: each event alone is larger than what the limit leaves beside the empty tables.
        let payload: (Int) -> String = limit == "size" ? { #"{"n":\#($0),"pad":"\#(String(repeating: "x", count: 1_500_000))"}"# } : { #"{"n":\#($0)}"# }
        for n in 0..<5 { unlimited.append(type: "old", source: "feed", time: hourAgo, payload: payload(n)) }
        unlimited.close(timeout: 120)

        var settings = Self.settings(maximumBytes: limit == "size" ? Self.limit : nil)
        if limit == "age" { settings.maximumAge = 60 }
        let store = try AgentStore(path: path, settings: settings, logger: Logger(label: "test"))
        try Self.closeAfterThePass(store)
        let reader = try DatabaseQueue(path: path)
        #expect(try reader.read { try Int.fetchAll($0, sql: "SELECT id FROM events") } == [5], "the newest is kept")
        #expect(store.statistics.expired == 4)

        let again = try AgentStore(path: path, settings: Self.settings(maximumBytes: nil), logger: Logger(label: "test"))
        again.append(type: "new", source: "feed", time: Date().timeIntervalSince1970, payload: "{}")
        again.close(timeout: 120)
        #expect(try reader.read { try Int.fetchAll($0, sql: "SELECT id FROM events ORDER BY id") } == [5, 6], "the next id follows the last given")
    }

    /// A first pass over millions of events ran to its end before the writer took anything
    /// else: a new workflow run waited 9.7 s for its commit. A pass now yields after 100 ms.
    @Test func aLongPassLetsTheWritesQueuedMeanwhileThrough() throws {
        let folder = TestPaths.temporaryDirectory("size-slice")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/agent.sqlite"
        try AgentStore(path: path, settings: Self.settings(maximumBytes: nil), logger: Logger(label: "test")).close(timeout: 120)
        let writer = try DatabaseQueue(path: path)
        try writer.write { db in
            try db.execute(sql: """
                WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 1000000)
                INSERT INTO events (time, type, source, payload) SELECT ?, 'tick', 'clock', '{"n":' || i || '}' FROM n
                """, arguments: [Date().timeIntervalSince1970])
        }
        try writer.close()
        var settings = Self.settings(maximumBytes: nil)
        settings.maximumEvents = 1_000
        let store = try AgentStore(path: path, settings: settings, logger: Logger(label: "test"))
        let answered = Guarded<Int?>(nil)
        store.commitEvent(type: "note", source: "desk", time: Date().timeIntervalSince1970, payload: Array("{}".utf8)) { written in
            answered.withLock { $0 = written ? store.statistics.bytesInUse : -1 }
            answered.broadcast()
        }
        let deadline = Date().addingTimeInterval(120)
        let whenAnswered = answered.withLock(waitingUntil: { $0 == nil ? deadline : nil }) { $0 }
        #expect(whenAnswered == 0, "written while the pass had more to delete: \(String(describing: whenAnswered))")
        try Self.closeAfterThePass(store)
        #expect(try DatabaseQueue(path: path).read { try Int.fetchOne($0, sql: "SELECT count(*) FROM events") } == 1_000)
    }

    @Test func aFloodOfLargeEventsIsDeletedAsItComesOldestFirst() throws {
        let folder = TestPaths.temporaryDirectory("size-flood")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/agent.sqlite"
        let store = try AgentStore(path: path, settings: Self.settings(maximumBytes: Self.limit), logger: Logger(label: "test"))
        let now = Date().timeIntervalSince1970
        // 40 MB, twenty times the limit, in bursts; the writer's passes run a second apart.
        var next = 0
        let deadline = Date().addingTimeInterval(180)
        while next < 4_000 || store.statistics.expired == 0, Date() < deadline {
            for _ in 0..<100 {
                store.append(type: "blob", source: "feed", time: now, payload: Self.payload(next))
                next += 1
            }
            let written = Guarded(false)
            store.whenWritten(within: 60) {
                written.withLock { $0 = true }
                written.broadcast()
            }
            let wait = Date().addingTimeInterval(60)
            written.withLock(waitingUntil: { $0 ? nil : wait }) { _ in }
        }
        #expect(store.statistics.expired > 0, "a pass ran during the flood")
        // The last pass is due a second after the one before; wait for it, not for a time.
        var last = try Self.contents(path)
        while last.inUse > Self.limit, Date() < deadline {
            Thread.sleep(forTimeInterval: 0.05)
            last = try Self.contents(path)
        }
        #expect(last.inUse <= Self.limit, "\(last.inUse)")
        #expect(last.numbers.last == next - 1)
        #expect(last.numbers == Array((next - last.numbers.count)..<next), "the oldest went first")
        store.close(timeout: 120)
        #expect(store.statistics.dropped == 0)
    }
}
