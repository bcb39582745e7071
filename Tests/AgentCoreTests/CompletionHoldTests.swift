import AgentTestSupport
import Foundation
import Testing
@testable import AgentCore

/// While an instant's held runs start, the worker keeps its frames (``CompletionHold``): the
/// supervisor is not woken by the first results while the last runs still need the cores.
@Suite(.ownThreads) struct CompletionHoldTests {
    /// A worker channel on one end of a socketpair, the other end read as the supervisor would.
    final class Pair {
        let channel: WorkerChannel
        let peer: Int32

        init() throws {
            var fds: [Int32] = [0, 0]
            guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds) == 0 else { throw POSIXError(.EIO) }
            channel = WorkerChannel(fd: fds[0])
            peer = fds[1]
            // A frame that never comes fails the read after 30 s rather than hanging the test.
            var timeout = timeval(tv_sec: 30, tv_usec: 0)
            setsockopt(peer, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            channel.startWriter()
        }

        deinit {
            close(channel.fd)
            close(peer)
        }

        /// Whether bytes arrive within `milliseconds`.
        func readable(within milliseconds: Int32) -> Bool {
            var entry = pollfd(fd: peer, events: Int16(POLLIN), revents: 0)
            return poll(&entry, 1, milliseconds) == 1
        }

        /// The log lines of the next `count` frames.
        func lines(_ count: Int) -> [String] {
            let reader = WorkerChannel(fd: peer)
            return (0..<count).compactMap { _ in reader.readOneFrame().map { String(decoding: $0.1, as: UTF8.self) } }
        }
    }

    @Test func framesSentWhileHeldWaitAndGoTogetherInOrderWhenReleased() throws {
        let pair = try Pair()
        pair.channel.holdFrames()
        for line in ["first", "second", "third"] { pair.channel.send(.log, body: Array(line.utf8)) }
        #expect(!pair.readable(within: 100), "nothing reaches the supervisor while held")
        pair.channel.releaseFrames()
        #expect(pair.lines(3) == ["first", "second", "third"])
        pair.channel.send(.log, body: Array("after".utf8))
        #expect(pair.lines(1) == ["after"], "frames go as they come again")
    }

    @Test func theHoldEndsWhenTheBatchsRunsHaveAllCompleted() throws {
        let pair = try Pair()
        let hold = CompletionHold(channel: pair.channel)
        hold.begin([1, 2])
        pair.channel.send(.log, body: Array("result 1".utf8))
        hold.completed(1)
        #expect(!pair.readable(within: 100), "one of two completed: still held")
        let ended = DispatchSemaphore(value: 0)
        Thread { hold.end(by: TaskExecutor.realtimeNanoseconds() + 60_000_000_000); ended.signal() }.start()
        pair.channel.send(.log, body: Array("result 2".utf8))
        hold.completed(2)
        #expect(ended.wait(timeout: .now() + 30) == .success, "the last completion ends the hold, not its 60 s deadline")
        #expect(pair.lines(2) == ["result 1", "result 2"])
    }

    @Test func theHoldEndsAtItsDeadlineWhenARunIsStillGoing() throws {
        let pair = try Pair()
        let hold = CompletionHold(channel: pair.channel)
        hold.begin([1, 2])
        pair.channel.send(.log, body: Array("result 1".utf8))
        hold.completed(1)
        hold.end(by: TaskExecutor.realtimeNanoseconds() + 20_000_000)
        #expect(pair.lines(1) == ["result 1"])
        // A completion after the batch (a long run) is not held.
        hold.completed(2)
        pair.channel.send(.log, body: Array("result 2".utf8))
        #expect(pair.lines(1) == ["result 2"])
    }
}
