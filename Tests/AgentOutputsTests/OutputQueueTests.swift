@testable import AgentOutputs
import AgentTestSupport
import Foundation
import JSONSchema
import Testing

@Suite(.ownThreads) struct OutputQueueTests {
    /// Reads a descriptor to its end on a thread of its own.
    final class Drain: @unchecked Sendable {
        private let done = DispatchSemaphore(value: 0)
        private var data: [UInt8] = []

        init(_ fd: Int32) {
            Thread { [self] in
                var chunk = [UInt8](repeating: 0, count: 65536)
                while true {
                    let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress!, $0.count) }
                    if n < 0, errno == EINTR { continue }
                    if n <= 0 { break }
                    data += chunk[0..<n]
                }
                done.signal()
            }.start()
        }

        func wait() -> [UInt8]? {
            done.wait(timeout: .now() + 20) == .success ? data : nil
        }
    }

    /// A stdout output writing into a pipe nobody reads yet is as slow as an output gets: its
    /// thread blocks in write(2). Publishing must not block, and the queue must keep the
    /// newest records, dropping (and counting) the oldest.
    @Test func fullQueueDropsTheOldestAndCountsThem() throws {
        var fds: [Int32] = [0, 0]
        #expect(pipe(&fds) == 0)
        defer { close(fds[0]) }
        _ = fcntl(fds[1], 1031 /* F_SETPIPE_SZ */, 4096)
        let (logger, _) = OutputTestSupport.capturingLogger()
        let configuration = OutputConfiguration(name: "slow", destination: .stdout, kinds: [.event], buffer: 100)
        let hub = try OutputHub(configurations: [configuration], baseDirectory: "/", logger: logger, standardOutput: fds[1], webhookTransport: .byScheme)

        let total = 20_000
        for n in 0..<total { hub.publish(OutputTestSupport.event(n)) }
        let whileBlocked = hub.statistics[0]
        #expect(whileBlocked.dropped > 0)
        #expect(whileBlocked.queued > 0)

        let drain = Drain(fds[0])
        #expect(hub.stop(timeout: 15))
        close(fds[1])
        let bytes = try #require(drain.wait())
        let lines = try String(decoding: bytes, as: UTF8.self).split(separator: "\n").map { try JSONValue.parse(String($0)) }
        let numbers = OutputTestSupport.numbers(lines)

        let final = hub.statistics[0]
        #expect(final.delivered == UInt64(numbers.count))
        #expect(final.delivered + final.dropped == UInt64(total))
        #expect(final.queued == 0)
        #expect(final.dropped >= whileBlocked.dropped)
        // Oldest dropped: what arrived is in order, and the newest `buffer` records all made it.
        #expect(numbers == numbers.sorted())
        #expect(Array(numbers.suffix(100)) == Array((total - 100)..<total))
    }

    /// Writing into a pipe whose reader is gone raises SIGPIPE, which would kill the process;
    /// the output's thread blocks it and counts an EPIPE instead.
    @Test func readerThatWentAwayIsAFailureNotACrash() throws {
        var fds: [Int32] = [0, 0]
        #expect(pipe(&fds) == 0)
        close(fds[0])
        defer { close(fds[1]) }
        let (logger, log) = OutputTestSupport.capturingLogger()
        let configuration = OutputConfiguration(name: "stdout", destination: .stdout)
        let hub = try OutputHub(configurations: [configuration], baseDirectory: "/", logger: logger, standardOutput: fds[1], webhookTransport: .byScheme)
        for n in 0..<3 { hub.publish(OutputTestSupport.event(n)) }
        #expect(hub.stop(timeout: 10))
        let statistics = hub.statistics[0]
        #expect(statistics.delivered == 0 && statistics.dropped == 3 && statistics.failedAttempts >= 1)
        #expect(statistics.lastError == "write failed: Broken pipe")
        #expect(log.lines.contains { $0.hasPrefix("error stdout: write failed: Broken pipe;") }, "\(log.lines)")
    }

    @Test func publishingAfterStopIsCountedAsDropped() throws {
        let (logger, _) = OutputTestSupport.capturingLogger()
        let folder = TestPaths.temporaryDirectory("outputs-stopped")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let hub = try OutputHub(json: [["type": "file", "path": "x.jsonl"]], baseDirectory: folder, logger: logger, environment: [:])
        #expect(hub.stop(timeout: 30))
        hub.publish(OutputTestSupport.event(1))
        #expect(hub.statistics[0].dropped == 1)
        #expect(hub.stop(timeout: 30))
    }
}
