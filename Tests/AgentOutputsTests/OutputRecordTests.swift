@testable import AgentOutputs
import AgentTestSupport
import JSONSchema
import Testing

@Suite(.ownThreads) struct OutputRecordTests {
    /// 2026-11-23T03:00:00.123Z
    let time: Int64 = 1_795_402_800_123_456_789

    @Test func eventRendersAsOneJSONLineWithItsPayload() throws {
        let record = OutputRecord.event(source: "trades", type: "trade", payload: Array(#"{"pair":"ETH/USD","price":1.5}"#.utf8), time: time)
        let line = record.jsonLine()
        #expect(!line.contains("\n"))
        #expect(line == #"{"kind":"event","time":"2026-11-23T03:00:00.123Z","source":"trades","type":"trade","payload":{"pair":"ETH/USD","price":1.5}}"#)
    }

    @Test func payloadThatIsNotJSONIsSentAsAString() throws {
        let record = OutputRecord.event(source: "raw", type: "bytes", payload: Array("not {json".utf8), time: time)
        let value = try JSONValue.parse(record.jsonLine())
        #expect(value["payload"] == "not {json")
        let empty = OutputRecord.event(source: "raw", type: "bytes", payload: [], time: time)
        #expect(try JSONValue.parse(empty.jsonLine())["payload"] == "")
    }

    @Test func messageRendersLevelByName() throws {
        let record = OutputRecord.message(source: "busy_pairs", level: 2, text: "ETH/USD: 9 trades \"fast\"", time: time)
        #expect(record.jsonLine() == #"{"kind":"message","time":"2026-11-23T03:00:00.123Z","source":"busy_pairs","level":"warning","text":"ETH/USD: 9 trades \"fast\""}"#)
        #expect((-1...6).map(OutputRecord.levelName) == ["debug", "debug", "info", "warning", "error", "critical", "critical", "critical"])
    }

    @Test func timesBeforeTheEpochStillRender() {
        #expect(OutputRecord.timestamp(0) == "1970-01-01T00:00:00.000Z")
        #expect(OutputRecord.timestamp(-1_000_000) == "1969-12-31T23:59:59.999Z")
    }

    @Test func ringDropsOldestWhenFull() {
        var ring = OutputRing(capacity: 3)
        let dropped = (0..<5).map { ring.append(OutputTestSupport.event($0)) }
        #expect(dropped == [0, 0, 0, 1, 1])
        let taken = ring.removeFirst(upTo: 2)
        #expect(taken.map { String(decoding: $0.payload, as: UTF8.self) } == [#"{"n":2}"#, #"{"n":3}"#])
        #expect(ring.count == 1)
        #expect(ring.append(OutputTestSupport.event(5)) == 0)
        #expect(ring.removeFirst(upTo: 10).count == 2)
        #expect(ring.bytes == 0)
    }

    /// 10,000 records of 60 KB each held 2 GB in the supervisor for every output that failed:
    /// the queue is bounded by its bytes too, the oldest dropped first.
    @Test func ringDropsOldestPastItsBytes() {
        func record(_ n: Int, _ size: Int) -> OutputRecord {
            .event(source: "shop", type: "flood", payload: Array(#"{"n":\#(n),"x":""#.utf8) + Array(repeating: UInt8(ascii: "y"), count: size) + Array(#""}"#.utf8), time: 0)
        }
        var ring = OutputRing(capacity: 10_000, byteLimit: 1 << 20)
        var dropped = 0
        for n in 0..<100 { dropped += ring.append(record(n, 60_000)) }
        #expect(ring.bytes <= 1 << 20)
        #expect(ring.count == 17 && dropped == 83, "\(ring.count) kept, \(dropped) dropped")
        #expect(ring.removeFirst(upTo: 1).first.map { String(decoding: $0.payload.prefix(9), as: UTF8.self) } == #"{"n":83,""#)
        // One record larger than the bound on its own waits alone; the next drops it.
        #expect(ring.append(record(100, 2 << 20)) == 16)
        #expect(ring.count == 1 && ring.bytes > 1 << 20)
        #expect(ring.append(record(101, 10)) == 1)
        #expect(ring.count == 1 && ring.bytes < 200)
    }
}
