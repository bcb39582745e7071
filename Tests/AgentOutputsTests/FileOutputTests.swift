@testable import AgentOutputs
import AgentTestSupport
import Foundation
import JSONSchema
import Testing

@Suite(.ownThreads) struct FileOutputTests {
    @Test func writesValidJSONLinesRelativeToTheBaseDirectory() throws {
        let folder = TestPaths.temporaryDirectory("outputs-file")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let (logger, _) = OutputTestSupport.capturingLogger()
        let hub = try OutputHub(json: [["type": "file", "path": "log/outputs.jsonl"]], baseDirectory: folder, logger: logger, environment: [:])
        hub.publish(OutputTestSupport.event(1))
        hub.publish(.event(source: "raw", type: "bytes", payload: Array("half {".utf8), time: 0))
        hub.publish(.message(source: "watch", level: 3, text: "disk\nfull", time: 0))
        #expect(hub.stop(timeout: 10))

        let records = try OutputTestSupport.jsonLines(folder + "/log/outputs.jsonl")
        #expect(records.count == 3)
        #expect(records[0] == ["kind": "event", "time": "2026-11-23T03:00:00.001Z", "source": "ticker", "type": "tick", "payload": ["n": 1]])
        #expect(records[1]["payload"] == "half {")
        #expect(records[2] == ["kind": "message", "time": "1970-01-01T00:00:00.000Z", "source": "watch", "level": "error", "text": "disk\nfull"])
        #expect(hub.statistics == [OutputStatistics(name: "file log/outputs.jsonl", type: "file", delivered: 3)])
    }

    @Test func rotatesAtMaxBytesKeepingKeepFiles() throws {
        let folder = TestPaths.temporaryDirectory("outputs-rotate")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/agent.jsonl"
        let (logger, _) = OutputTestSupport.capturingLogger()
        let hub = try OutputHub(
            json: [["type": "file", "path": .string(path), "max_bytes": 2000, "keep": 3]], baseDirectory: "/nonexistent",
            logger: logger, environment: [:]
        )
        let total = 400
        for n in 0..<total { hub.publish(OutputTestSupport.event(n)) }
        #expect(hub.stop(timeout: 10))

        let files = [path + ".3", path + ".2", path + ".1", path]
        for file in files {
            let size = try FileManager.default.attributesOfItem(atPath: file)[.size] as? Int ?? -1
            #expect(size > 0 && size <= 2000, "\(file): \(size) bytes")
        }
        #expect(!FileManager.default.fileExists(atPath: path + ".4"))
        // Oldest to newest, the kept files hold the last records without a gap.
        let numbers = try OutputTestSupport.numbers(files.flatMap { try OutputTestSupport.jsonLines($0) })
        #expect(numbers.last == total - 1)
        #expect(numbers == Array(numbers[0]...(total - 1)))
        #expect(hub.statistics.first?.delivered == UInt64(total))
    }

    @Test func kindsFilterWhatEachOutputReceives() throws {
        let folder = TestPaths.temporaryDirectory("outputs-kinds")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let (logger, _) = OutputTestSupport.capturingLogger()
        let hub = try OutputHub(json: [
            ["type": "file", "path": "messages.jsonl", "kinds": ["message"]],
            ["type": "file", "path": "events.jsonl", "kinds": ["event"]],
        ], baseDirectory: folder, logger: logger, environment: [:])
        #expect(hub.wants(.event) && hub.wants(.message))
        for n in 0..<5 {
            hub.publish(OutputTestSupport.event(n))
            hub.publish(.message(source: "m", level: 1, text: "note \(n)", time: 0))
        }
        #expect(hub.stop(timeout: 10))
        #expect(try OutputTestSupport.jsonLines(folder + "/messages.jsonl").map { $0["text"] } == (0..<5).map { .string("note \($0)") })
        #expect(try OutputTestSupport.numbers(OutputTestSupport.jsonLines(folder + "/events.jsonl")) == Array(0..<5))

        let messagesOnly = try OutputHub(json: [["type": "stdout", "kinds": ["message"]]], baseDirectory: folder, logger: logger, environment: [:])
        #expect(!messagesOnly.wants(.event) && messagesOnly.wants(.message))
        messagesOnly.stop(timeout: 1)
    }

    @Test func unwritableFileStopsTheHubBeforeItStarts() throws {
        let (logger, _) = OutputTestSupport.capturingLogger()
        let error = #expect(throws: OutputConfigurationError.self) {
            try OutputHub(json: [["type": "stdout"], ["type": "file", "path": "/proc/no-such-dir/out.jsonl"]], baseDirectory: "/", logger: logger, environment: [:])
        }
        #expect(error?.pointer.description == "/1/path")
        #expect(error?.message.contains("cannot open /proc/no-such-dir/out.jsonl") == true, "\(String(describing: error))")
    }

    @Test func lineCutShortByAnEarlierRunIsEndedBeforeAppending() throws {
        let folder = TestPaths.temporaryDirectory("outputs-partial")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/out.jsonl"
        try Data("{\"kind\":\"ev".utf8).write(to: URL(fileURLWithPath: path))
        let (logger, _) = OutputTestSupport.capturingLogger()
        let hub = try OutputHub(json: [["type": "file", "path": "out.jsonl"]], baseDirectory: folder, logger: logger, environment: [:])
        hub.publish(OutputTestSupport.event(7))
        #expect(hub.stop(timeout: 10))
        let text = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n")
        try #require(text.count == 2, "\(text)")
        #expect(try OutputTestSupport.numbers([JSONValue.parse(String(text[1]))]) == [7])
    }
}
