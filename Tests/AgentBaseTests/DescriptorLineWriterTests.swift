@testable import AgentBase
import AgentTestSupport
import Foundation
import Testing

/// The supervisor's log lines go to stderr through a ``DescriptorLineWriter``: a reader that
/// stops reading must never hold the one who logs.
@Suite(.ownThreads) struct DescriptorLineWriterTests {
    @Test func linesToAReaderThatStopsReadingNeitherWaitNorGoOutOfOrderAndDropsAreCounted() throws {
        let (readEnd, writeEnd) = try SmallPipe.make()
        defer { close(readEnd); close(writeEnd) }
        // 64 lines of the test's own fill the pipe's one page before the writer starts.
        let fill = Array((String(repeating: "f", count: 63) + "\n").utf8)
        for _ in 0..<64 { try #require(fill.withUnsafeBytes { Foundation.write(writeEnd, $0.baseAddress, 64) } == 64) }
        let writer = DescriptorLineWriter(fd: writeEnd, limit: 8192)
        let line: @Sendable (Int) -> [UInt8] = { index in Array("line \(index) \(String(repeating: "x", count: 90))\n".utf8) }
        // 400 lines of ~100 B: 40 kB against a full pipe, room for 8 kB and at most as much in
        // the thread's hands; then 100 more.
        let count = 400
        let total = 500
        let done = DispatchSemaphore(value: 0)
        let thread = Thread {
            for index in 0..<count { line(index).withUnsafeBytes { writer.write($0) } }
            done.signal()
        }
        thread.start()
        #expect(done.wait(timeout: .now() + 30) == .success, "write waited for the reader")
        // The pipe was full from the start, so the thread's first chunk holds it until the
        // reader comes; a second burst larger than the limit then surely ends in drops, however
        // late the thread took that chunk (a thread started late may take the first burst's
        // last lines with it, and leave no drops after them).
        let taken = Date(timeIntervalSinceNow: 30)
        while !writer.isWriting, Date() < taken { usleep(1000) }
        #expect(writer.isWriting, "the thread never took a chunk")
        for index in count..<total { line(index).withUnsafeBytes { writer.write($0) } }

        // The reader comes back: what waited, then a line that fits again.
        var text = ""
        let deadline = Date(timeIntervalSinceNow: 30)
        while !text.contains("line 0 "), Date() < deadline {
            text += String(decoding: SmallPipe.readAvailable(readEnd), as: UTF8.self)
        }
        // Keep reading while the writer empties what waits.
        while Date() < deadline {
            text += String(decoding: SmallPipe.readAvailable(readEnd), as: UTF8.self)
            if writer.drain(timeout: 0.05) { break }
        }
        text += String(decoding: SmallPipe.readAvailable(readEnd), as: UTF8.self)
        // Each line in order, and each gap said where it is: a notice of k drops stands where
        // k lines are missing (how many, and where, depends on when the thread took the lines).
        let lines = text.split(separator: "\n").map(String.init)
        var expected = 0
        var notices = 0
        for line in lines.drop(while: { $0 == String(decoding: fill.dropLast(), as: UTF8.self) }) {
            if line.hasPrefix("line ") {
                #expect(Int(line.split(separator: " ")[1]) == expected, "after \(expected - 1): \(line.prefix(12))")
                expected += 1
            } else if line.contains("line(s) dropped here") {
                notices += 1
                expected += Int(line.split(separator: " ")[1]) ?? 0
            } else {
                Issue.record("an unexpected line: \(line)")
            }
        }
        #expect(expected == total, "lines and drops account for \(expected) of \(total)")
        #expect(notices >= 1, "nothing was dropped: the limit did not hold")
        // The last drops were said once the reader came back, with no line after them.
        #expect(lines.last?.contains("line(s) dropped here") == true)

        Array("last line\n".utf8).withUnsafeBytes { writer.write($0) }
        var rest = ""
        while !rest.contains("last line"), Date() < deadline { rest += String(decoding: SmallPipe.readAvailable(readEnd), as: UTF8.self) }
        #expect(rest == "last line\n")
    }

    @Test func drainWaitsUntilEveryQueuedLineIsWritten() throws {
        let (readEnd, writeEnd) = try SmallPipe.make()
        defer { close(readEnd); close(writeEnd) }
        let writer = DescriptorLineWriter(fd: writeEnd)
        for index in 0..<30 { Array("line \(index)\n".utf8).withUnsafeBytes { writer.write($0) } }
        #expect(writer.drain(timeout: 30))
        let text = String(decoding: SmallPipe.readAvailable(readEnd), as: UTF8.self)
        #expect(text.split(separator: "\n").count == 30)
    }

    @Test func drainGivesUpAtItsTimeoutWhileTheReaderIsAway() throws {
        let (readEnd, writeEnd) = try SmallPipe.make()
        defer { close(readEnd); close(writeEnd) }
        let writer = DescriptorLineWriter(fd: writeEnd)
        let line = Array((String(repeating: "y", count: 1000) + "\n").utf8)
        for _ in 0..<20 { line.withUnsafeBytes { writer.write($0) } }
        #expect(!writer.drain(timeout: 0.2), "20 kB cannot have gone into a 4 kB pipe nobody reads")
        // Read it all, so that the writer's thread is not left blocked for the rest of the run.
        let deadline = Date(timeIntervalSinceNow: 30)
        while !writer.drain(timeout: 0.05), Date() < deadline { _ = SmallPipe.readAvailable(readEnd) }
    }

    @Test func finishCountsTheLinesItCouldNotWriteThoseBeingWrittenAmongThem() throws {
        let (readEnd, writeEnd) = try SmallPipe.make()
        defer { close(readEnd); close(writeEnd) }
        let writer = DescriptorLineWriter(fd: writeEnd)
        // 20 lines of 1 kB against a pipe of 4 kB nobody reads: at most four go in, the rest
        // waits or is in the thread's hands, blocked.
        let line = Array((String(repeating: "z", count: 999) + "\n").utf8)
        for _ in 0..<20 { line.withUnsafeBytes { writer.write($0) } }
        let unwritten = writer.finish(until: Date(timeIntervalSinceNow: 0.2))
        #expect((16...20).contains(unwritten), "\(unwritten) of 20 lines said unwritten")
        // Read it all, so that the thread is not left blocked for the rest of the run.
        let deadline = Date(timeIntervalSinceNow: 30)
        while !writer.drain(timeout: 0.05), Date() < deadline { _ = SmallPipe.readAvailable(readEnd) }
        #expect(writer.finish(until: Date(timeIntervalSinceNow: 5)) == 0, "once read, nothing is left")
    }
}
