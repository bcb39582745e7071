@testable import AgentCore
import AgentTestSupport
import Foundation
import JSONSchema
import Testing

/// The `jsonl/1` frames: every frame's line decodes to itself, through `Codable` too; a line
/// that is not a frame is refused with its pointer, what was expected and what was found.
@Suite(.ownThreads) struct JSONLinesFrameTests {
    static let every: [JSONLinesFrame] = [
        .start(.init(settings: ["every": 5], process: "feed", type: "reading", state: ["n": 1], watchdog: 3)),
        .event(.init(type: "trade", source: "feed", time: 1_764_000_000.25, payload: ["pair": "ETH/USD"])),
        .chat(.init(message: "will it rain?", context: ["conversation": "default"])),
        .run(.init(id: "r-1", input: ["path": "/tmp"])),
        .cancel(id: "r-1"),
        .stop,
        .ready,
        .emit(.init(type: "trade", payload: ["pair": "ETH/USD", "price": 1.5])),
        .message(.init(level: .warning, text: "slow")),
        .alert("frost"),
        .heartbeat,
        .state(["last": 42]),
        .progress(.init(id: "r-1", fraction: 0.5, message: "half")),
        .result(.init(id: "r-1", output: ["lines": 3])),
        .error(.init(id: "r-1", message: "no such file")),
        .error(.init(message: "the station is unreachable")),
        .answer(.init(confidence: 0.75, text: "rain at noon")),
    ]

    @Test func everyFrameDecodesFromItsOwnLine() throws {
        for frame in Self.every {
            let line = frame.line
            #expect(line.last == UInt8(ascii: "\n"))
            #expect(try JSONLinesFrame(line: line.dropLast()) == frame, "\(String(decoding: line, as: UTF8.self))")
        }
        #expect(Set(Self.every.map(\.name)) == JSONLinesFrame.runtimeFrames.union(JSONLinesFrame.programFrames))
    }

    @Test func everyFrameRoundTripsThroughCodable() throws {
        let data = try JSONEncoder().encode(Self.every)
        #expect(try JSONDecoder().decode([JSONLinesFrame].self, from: data) == Self.every)
    }

    @Test func shortFormsAndDefaultsAreRead() throws {
        #expect(try JSONLinesFrame(line: Array(#"{"alert": "frost"}"#.utf8)) == .alert("frost"))
        #expect(try JSONLinesFrame(line: Array(#"{"error": "gone"}"#.utf8)) == .error(.init(message: "gone")))
        #expect(try JSONLinesFrame(line: Array(#"{"message": {"text": "hi"}}"#.utf8)) == .message(.init(level: .info, text: "hi")))
        #expect(try JSONLinesFrame(line: Array(#"{"emit": {"type": "t", "future": 1}}"#.utf8)) == .emit(.init(type: "t", payload: .null)))
    }

    @Test func aLineThatIsNotAFrameIsRefusedWithItsPointer() {
        let cases: [(String, JSONLinesError.Code, String, String)] = [
            ("not json", .notJSON, "", "expected a line of JSON, found invalid JSON"),
            (#"[1]"#, .malformed, "", "expected an object with exactly one member naming the frame (e.g. {\"emit\": {…}}), found array"),
            (#"{"emit": {"type": "a"}, "ready": true}"#, .malformed, "", #"found an object with the members "emit", "ready""#),
            (#"{"emit": 3}"#, .malformed, "/emit", "expected an object, found 3 (integer)"),
            (#"{"emit": {"payload": 1}}"#, .malformed, "/emit/type", "expected a string, found nothing (the member is missing)"),
            (#"{"emit": {"type": ""}}"#, .malformed, "/emit/type", "expected a non-empty string of at most 65535 bytes, found \"\" (string)"),
            // A NUL was stored cut short but routed whole; an escape reached terminals.
            (#"{"emit": {"type": "flood\u0000secret"}}"#, .malformed, "/emit/type", "expected an event type without control characters"),
            (#"{"emit": {"type": "ctl\u001b[31mtype"}}"#, .malformed, "/emit/type", "expected an event type without control characters"),
            (#"{"ready": 1}"#, .malformed, "/ready", "expected true, found 1 (integer)"),
            (#"{"answer": {"confidence": 2, "text": "x"}}"#, .malformed, "/answer/confidence", "expected a number from 0 to 1, found 2 (integer)"),
            (#"{"message": {"level": "loud", "text": "x"}}"#, .malformed, "/message/level", "expected one of debug, info, warning, error, critical, found \"loud\" (string)"),
            (#"{"emitt": {}}"#, .malformed, "/emitt", "expected one of the frames"),
        ]
        for (line, code, pointer, message) in cases {
            do {
                _ = try JSONLinesFrame(line: Array(line.utf8))
                Issue.record("\(line) was accepted")
            } catch {
                #expect(error.code == code, "\(line): \(error)")
                #expect(error.pointer == pointer, "\(line): \(error)")
                #expect(error.message.contains(message), "\(line): \(error)")
            }
        }
    }

    @Test func theReaderSkipsAnOverlongLineWithoutBufferingIt() throws {
        var fds: [Int32] = [0, 0]
        #expect(pipe(&fds) == 0)
        let writeEnd = fds[1]
        let writer = Thread {
            var text = Array("{\"ready\": true}\n".utf8)
            text += [UInt8](repeating: UInt8(ascii: "x"), count: 3 << 20) + [10]
            text += Array("{\"heartbeat\": true}\nlast".utf8)
            _ = text.withUnsafeBytes { write(writeEnd, $0.baseAddress, $0.count) }
            close(writeEnd)
        }
        writer.start()
        var reader = JSONLinesReader(fd: fds[0], limit: 1000)
        defer { reader.deallocate(); close(fds[0]) }
        var lines: [String] = []
        var skipped: [Int] = []
        while reader.read({ item in
            switch item {
            case .line(let bytes): lines.append(String(decoding: bytes, as: UTF8.self))
            case .tooLong(let length, _, _): skipped.append(length)
            }
        }) {}
        #expect(lines == [#"{"ready": true}"#, #"{"heartbeat": true}"#, "last"])
        #expect(skipped.count == 1 && skipped[0] > 1000 && skipped[0] <= 3 << 20, "reported once: \(skipped)")
    }

    /// A line that never ends (a writer with no newline) is reported once it passes the limit,
    /// not only at its newline, which may never come.
    @Test func aLineWithoutANewlineIsReportedAsSoonAsItPassesTheLimit() throws {
        var fds: [Int32] = [0, 0]
        #expect(pipe(&fds) == 0)
        defer { close(fds[0]); close(fds[1]) }
        let text = [UInt8](repeating: UInt8(ascii: "x"), count: 5000)
        _ = text.withUnsafeBytes { write(fds[1], $0.baseAddress, $0.count) }
        var reader = JSONLinesReader(fd: fds[0], limit: 1000)
        defer { reader.deallocate() }
        var reports: [(Int, Bool)] = []
        // One read: the writer is still there, its line not ended.
        #expect(reader.read { item in if case .tooLong(let length, let whole, _) = item { reports.append((length, whole)) } })
        #expect(reports.count == 1 && reports[0].0 == 5000 && !reports[0].1, "\(reports)")
        _ = text.withUnsafeBytes { write(fds[1], $0.baseAddress, $0.count) }
        _ = reader.read { item in if case .tooLong(let length, let whole, _) = item { reports.append((length, whole)) } }
        #expect(reports.count == 1, "the rest is skipped unreported: \(reports)")
    }
}
