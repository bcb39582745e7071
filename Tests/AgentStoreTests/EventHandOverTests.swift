import AgentCore
@testable import AgentStore
import AgentTestSupport
import Foundation
import GRDB
import Logging
import Testing

/// How events reach the store's writer: one at a time or as a run of one source and type
/// (the supervisor's `deliverRun` entries, one copy and one lock per run), into chunks whose
/// events the writer inserts with multi-row statements.
@Suite(.ownThreads) struct EventHandOverTests {
    /// The entries of a run: `event` frames as a worker emits them.
    static func entries(_ type: String, times: [Int64], payload: (Int64) -> String) -> [UInt8] {
        let frames = FrameBuffer()
        for time in times {
            Array(type.utf8).withUnsafeBytes { t in
                Array(payload(time).utf8).withUnsafeBytes { EventFrame.appendEmitted(type: t, timeNanoseconds: time, payload: $0, to: frames) }
            }
        }
        return frames.bytes
    }

    /// Now, in nanoseconds: events older than the retention's week would be deleted.
    static let now = Int64(Date().timeIntervalSince1970) * 1_000_000_000

    static func withStore(_ label: String, settings: StoreSettings = StoreSettings(), _ body: (AgentStore) throws -> Void) throws -> [StoreReader.StoredEvent] {
        let folder = TestPaths.temporaryDirectory(label)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let store = try AgentStore(path: folder + "/agent.sqlite", settings: settings, logger: Logger(label: "test"))
        try body(store)
        store.close()
        return try StoreReader(path: folder + "/agent.sqlite").events(types: [], since: nil, limit: 1_000_000, newest: false)
    }

    @Test func runsAndSingleEventsAreStoredInTheOrderHandedOverWithEachEntrysTimeAndPayload() throws {
        // Counts around each statement size (128, 32, 8, 1 rows), so that every size and every
        // remainder is used.
        let runSizes = [1, 7, 8, 9, 31, 33, 127, 128, 129, 300]
        var expected: [(type: String, source: String, time: Double, payload: String)] = []
        var next = Self.now
        let stored = try Self.withStore("hand-over") { store in
            for (index, size) in runSizes.enumerated() {
                let times = (0..<Int64(size)).map { next + $0 }
                next += Int64(size)
                let run = Self.entries("tick", times: times) { #"{"n":\#($0),"run_id":"r\#($0 % 3)"}"# }
                run.withUnsafeBytes { store.appendRun(type: "tick", source: "clock", entries: $0, count: size) }
                expected += times.map { ("tick", "clock", Double($0) / 1e9, #"{"n":\#($0),"run_id":"r\#($0 % 3)"}"#) }
                // Single events between the runs, of another type and source.
                for single in 0..<(index % 3) {
                    let payload = #"{"single":\#(single)}"#
                    let time = Double(Self.now / 1_000_000_000 + Int64(index))
                    store.append(type: "note", source: "desk", time: time, payload: payload)
                    expected.append(("note", "desk", time, payload))
                }
            }
            #expect(store.statistics.dropped == 0)
        }
        #expect(stored.count == expected.count)
        for (event, wanted) in zip(stored, expected) {
            #expect(event.type == wanted.type && event.source == wanted.source && event.time == wanted.time && event.payload == wanted.payload)
        }
        #expect(zip(stored, stored.dropFirst()).allSatisfy { $0.id < $1.id })
    }

    @Test func eachEventsRunIDIsIndexedFromARunToo() throws {
        let folder = TestPaths.temporaryDirectory("hand-over-run-id")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let store = try AgentStore(path: folder + "/agent.sqlite", settings: StoreSettings(), logger: Logger(label: "test"))
        let run = Self.entries("task.completed", times: (1...200).map { Self.now + $0 }) { #"{"run_id":"run-\#($0 % 4)","n":\#($0)}"# }
        run.withUnsafeBytes { store.appendRun(type: "task.completed", source: "tasks", entries: $0, count: 200) }
        store.close()
        let events = try StoreReader(path: folder + "/agent.sqlite").events(types: [], runs: ["run-1"], since: nil, limit: 1_000, newest: false)
        #expect(events.count == 50 && events.allSatisfy { $0.payload.contains(#""run_id":"run-1""#) })
    }

    /// The loop checked the run's entries; the writer stores the well-formed first ones of a
    /// run whose count says more, and never reads past its bytes.
    @Test func aRunWithFewerWellFormedEntriesThanItsCountStoresThoseItHas() throws {
        let stored = try Self.withStore("hand-over-short") { store in
            var run = Self.entries("tick", times: [1, 2, 3].map { Self.now + $0 }) { #"{"n":\#($0 - Self.now)}"# }
            run += [0xFF, 0xFF]
            run.withUnsafeBytes { store.appendRun(type: "tick", source: "clock", entries: $0, count: 5) }
            store.append(type: "after", source: "clock", time: Double(Self.now / 1_000_000_000), payload: "{}")
        }
        #expect(stored.map(\.payload) == [#"{"n":1}"#, #"{"n":2}"#, #"{"n":3}"#, "{}"])
    }

    /// A run of `count` ticks whose times (and payloads' `n`) start at `first`.
    static func ticks(from first: Int64, count: Int) -> PendingEvents.Run {
        let times = (0..<Int64(count)).map { first + $0 }
        return PendingEvents.Run(type: "tick", source: "clock", entries: entries("tick", times: times) { #"{"n":\#($0)}"# }, count: count)
    }

    /// The times of a taken chunk's events, in order (a run's from its entries).
    static func times(_ chunk: PendingEvents.Chunk) -> [Int64] {
        switch chunk {
        case .singles(let singles): return singles.items.map { Int64($0.time) }
        case .run(let run):
            return run.entries.withUnsafeBytes { entries in
                var times: [Int64] = [], offset = 0
                while let entry = EventFrame.runEntry(entries, at: offset) {
                    times.append(entry.time)
                    offset = entry.next
                }
                return times
            }
        }
    }

    @Test func aFullQueueDropsOnlyAsManyOfTheOldestAsNeededAndABatchTakesWholeChunks() {
        var pending = PendingEvents()
        let payload: [UInt8] = Array("{}".utf8)
        for index in 0..<10 {
            pending.append(Self.ticks(from: Int64(index) * 1_000, count: 100))
            payload.withUnsafeBytes { pending.append(type: "note", source: "desk", time: Double(index * 1_000 + 500), payload: $0) }
        }
        #expect(pending.count == 1_010)
        // 100 more under a limit of 1,000 (a tenth to spare): 210 of the oldest go, the first
        // two runs and notes whole and the third run's first 8.
        let dropped = pending.makeRoom(for: 100, limit: 1_000)
        #expect(dropped == 210 && pending.count == 800)
        #expect(pending.makeRoom(for: 1, limit: 1_000) == 0)
        let batch = pending.take(atLeast: 250)
        #expect(batch.map(\.count) == [92, 1, 100, 1, 100] && pending.count == 506)
        #expect(batch.map(Self.times) == [Array(2_008..<2_100), [2_500], Array(3_000..<3_100), [3_500], Array(4_000..<4_100)])
        #expect(pending.take(atLeast: 10_000).reduce(0) { $0 + $1.count } == 506 && pending.isEmpty)
    }

    /// A small queue_limit: one overflow drops a few of the oldest single events, not the
    /// whole chunk they share (before, the queue was emptied).
    @Test func aSmallQueueLimitKeepsTheNewestEventsOfAChunkOnOverflow() {
        var pending = PendingEvents()
        var dropped = 0
        for index in 0..<50 {
            dropped += pending.makeRoom(for: 1, limit: 20)
            Array(#"{"n":\#(index)}"#.utf8).withUnsafeBytes { pending.append(type: "note", source: "desk", time: Double(index), payload: $0) }
            #expect(pending.count <= 20)
        }
        // The 21st event finds 20: 3 go (17 kept: 20, less a tenth, less the one to come), and
        // so every third event after it: 10 overflows, 30 dropped, the newest 20 kept.
        #expect(dropped == 30 && pending.count == 20)
        #expect(pending.take(atLeast: 100).flatMap(Self.times) == Array(30..<50))
        // A run bigger than what is left is cut too, not dropped whole.
        pending.append(Self.ticks(from: 0, count: 15))
        #expect(pending.makeRoom(for: 10, limit: 20) == 7)
        #expect(pending.take(atLeast: 100).flatMap(Self.times) == Array(7..<15))
    }
}
