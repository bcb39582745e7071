import AgentTestSupport
import CAgentSystem
import Foundation
import Testing
@testable import AgentCore

/// A paced datasource that woke late emits its due events back to back. They go into the emit
/// ring on the emitter's own thread, not through a wake-up of the worker's writer thread, also
/// when the supervisor drained the first and went back to sleep before the next.
@Suite(.ownThreads) struct WorkerChannelDirectWriteTests {
    @Test func eventsOfABurstReachASupervisorThatSleepsBetweenThemWithoutTheWriterThread() throws {
        let capacity = 64 << 10
        let (emitRing, memfd) = try SharedRing.create(capacity: capacity)
        defer { close(memfd) }
        let supervisorSide = try SharedRing(mapping: memfd, capacity: capacity)
        var fds: [Int32] = [0, 0]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds) == 0 else { throw POSIXError(.EIO) }
        defer { close(fds[0]); close(fds[1]) }
        let signal = eventfd(0, Int32(EFD_CLOEXEC | EFD_NONBLOCK))
        let room = eventfd(0, Int32(EFD_CLOEXEC | EFD_NONBLOCK))
        defer { close(signal) }
        let channel = WorkerChannel(fd: fds[0])
        channel.attachEmitRing(emitRing, signal: signal, room: room)
        // No writer thread is started: a frame handed to it would stay queued, out of the ring.
        for n in 0..<8 {
            #expect(supervisorSide.prepareToWait(), "the supervisor sleeps before event \(n)")
            let body = Array("event \(n)".utf8)
            channel.send(.log, body: body)
            let readable = try #require(supervisorSide.readable())
            #expect(readable.count == FrameCodec.headerLength + body.count, "event \(n) is in the ring at once")
            #expect(Array(readable.dropFirst(FrameCodec.headerLength)) == body)
            var count: UInt64 = 0
            #expect(read(signal, &count, 8) == 8 && count == 1, "the sleeping supervisor is signalled for event \(n)")
            _ = supervisorSide.release(readable.count)
        }
    }
}
