@testable import AgentBase
import AgentTestSupport
import Foundation
import Testing

/// The console's stdout (events and messages) goes through a thread of its own: a reader that
/// stops reading never holds the loop, which prints.
@Suite(.ownThreads) struct ConsoleOutputTests {
    @Test func aJSONConsoleWhoseReaderStallsNeverWaitsAndSaysInJSONWhereLinesWereDropped() throws {
        let (readEnd, writeEnd) = try SmallPipe.make()
        defer { close(readEnd); close(writeEnd) }
        // Used by the thread below alone until it is done.
        nonisolated(unsafe) let console = ConsoleOutput(json: true, showEvents: true, fd: writeEnd)
        let writer = try #require(console.writeThroughThread(limit: 8192))
        // 2,000 messages of ~150 B, flushed in turns of 50 as the loop does: 300 kB against a
        // pipe of 4 kB and 8 kB waiting.
        let count = 2000
        let done = DispatchSemaphore(value: 0)
        let thread = Thread {
            for index in 0..<count {
                console.message(source: "feed", level: 1, text: "message \(index) " + String(repeating: "x", count: 40), timeNanoseconds: 0)
                if index % 50 == 49 { console.flush() }
            }
            console.flush()
            done.signal()
        }
        thread.start()
        #expect(done.wait(timeout: .now() + 30) == .success, "the console waited for its reader")

        // The reader comes back: every line is JSON, the messages in order, and each gap is a
        // `dropped` record that counts the lines missing there.
        var bytes: [UInt8] = []
        let deadline = Date(timeIntervalSinceNow: 30)
        while Date() < deadline {
            bytes += SmallPipe.readAvailable(readEnd)
            if writer.drain(timeout: 0.05) { break }
        }
        bytes += SmallPipe.readAvailable(readEnd)
        var expected = 0
        var dropRecords = 0
        for line in bytes.split(separator: 10) {
            let record = try #require(try JSONSerialization.jsonObject(with: Data(line)) as? [String: Any], "not JSON: \(String(decoding: line, as: UTF8.self))")
            switch record["kind"] as? String {
            case "message":
                let text = record["text"] as? String ?? ""
                #expect(text.hasPrefix("message \(expected) "), "after \(expected - 1): \(text.prefix(14))")
                expected += 1
            case "dropped":
                dropRecords += 1
                expected += record["lines"] as? Int ?? 0
                #expect((record["text"] as? String)?.contains("line(s) dropped here") == true)
            default:
                Issue.record("an unexpected record: \(record)")
            }
        }
        #expect(expected == count, "messages and drops account for \(expected) of \(count)")
        #expect(dropRecords >= 1, "nothing was dropped: the limit did not hold")
    }

    @Test func theDroppedNoticeTakesEachOutputsOwnFormat() {
        #expect(ConsoleOutput.droppedLine(3, json: false, journal: false) == "… 3 line(s) dropped here: the output was not read")
        #expect(ConsoleOutput.droppedLine(3, json: false, journal: true) == "<4>… 3 line(s) dropped here: the output was not read")
        let json = ConsoleOutput.droppedLine(3, json: true, journal: false)
        let record = (try? JSONSerialization.jsonObject(with: Data(json.utf8))) as? [String: Any]
        #expect(record?["kind"] as? String == "dropped" && record?["lines"] as? Int == 3, "\(json)")
    }

    @Test func stdoutAndStderrAreOneFileWhenTheyAreOnePipeOrOneTerminal() throws {
        let (readEnd, writeEnd) = try SmallPipe.make()
        defer { close(readEnd); close(writeEnd) }
        let copy = dup(writeEnd)
        defer { close(copy) }
        #expect(ConsoleOutput.sameFile(writeEnd, copy), "one pipe, as `2>&1` makes it")
        let (otherRead, otherWrite) = try SmallPipe.make()
        defer { close(otherRead); close(otherWrite) }
        #expect(!ConsoleOutput.sameFile(writeEnd, otherWrite))
        #expect(!ConsoleOutput.sameFile(writeEnd, -1), "a closed descriptor is no file")
        // Sharing: the console's lines go through the log's writer, in one order with its lines.
        let log = DescriptorLineWriter(fd: writeEnd)
        let console = ConsoleOutput(json: true, showEvents: true, fd: writeEnd)
        #expect(console.writeThroughThread(sharing: log) === log)
        Array("a log line\n".utf8).withUnsafeBytes { log.write($0) }
        console.message(source: "feed", level: 1, text: "a message", timeNanoseconds: 0)
        console.flush()
        Array("another log line\n".utf8).withUnsafeBytes { log.write($0) }
        #expect(log.drain(timeout: 30))
        let lines = String(decoding: SmallPipe.readAvailable(readEnd), as: UTF8.self).split(separator: "\n")
        #expect(lines.count == 3 && lines[0] == "a log line" && lines[1].contains("a message") && lines[2] == "another log line", "\(lines)")
    }
}

extension ConsoleOutputTests {
    /// A module's message and an event's payload are its text: the readable console shows their
    /// controls as `\u{…}` (an escape sequence would retitle or clear the terminal, a line
    /// break forge a line), and JSON lines keep the text as it is.
    @Test func aMessageOrPayloadsControlsAreShownNotObeyed() throws {
        let (readEnd, writeEnd) = try SmallPipe.make()
        defer { close(readEnd); close(writeEnd) }
        let console = ConsoleOutput(json: false, showEvents: true, fd: writeEnd)
        console.message(source: "evil", level: 2, text: "A\u{1B}]0;PWNED\u{7}\u{1B}[2J\u{9B}\u{202E}B\nforged line", timeNanoseconds: 0)
        let payload = Array("{\"t\":\"x\u{9B}2J\u{202E}\"}".utf8)
        payload.withUnsafeBytes { payload in
            Array("tick".utf8).withUnsafeBytes { console.event(source: "feed", type: $0, timeNanoseconds: 0, payload: payload) }
        }
        console.flush()
        let text = String(decoding: SmallPipe.readAvailable(readEnd), as: UTF8.self)
        #expect(!text.unicodeScalars.contains { $0.value == 0x1B || $0.value == 0x07 || $0.value == 0x9B || $0.value == 0x202E }, "\(text.debugDescription)")
        #expect(text.contains(#"A\u{1B}]0;PWNED\u{7}\u{1B}[2J\u{9B}\u{202E}B\u{A}forged line"#), "\(text.debugDescription)")
        #expect(text.split(separator: "\n").count == 2, "one line each: \(text.debugDescription)")
        #expect(text.contains(#"feed → tick  {"t":"x\u{9B}2J\u{202E}"}"#), "\(text.debugDescription)")

        let json = ConsoleOutput(json: true, showEvents: true, fd: writeEnd)
        json.message(source: "evil", level: 2, text: "A\u{9B}B", timeNanoseconds: 0)
        json.flush()
        let line = try #require(try JSONSerialization.jsonObject(with: Data(SmallPipe.readAvailable(readEnd))) as? [String: Any])
        #expect(line["text"] as? String == "A\u{9B}B", "JSON keeps the text")
    }
}
