import AgentTestSupport
import CAgentSystem
import Foundation
import Testing
@testable import AgentCore

/// A paced datasource that woke late emits its due events back to back. The first few go into
/// the emit ring on the emitter's own thread, not through a wake-up of the worker's writer
/// thread, also when the supervisor drained one and went back to sleep before the next; the
/// rest of a longer burst waits for the writer, which batches it.
@Suite(.ownThreads) struct WorkerChannelDirectWriteTests {
    @Test func theFirstEventsOfABurstReachASupervisorThatSleepsBetweenThemWithoutTheWriterThread() throws {
        let capacity = 64 << 10
        let (emitRing, memfd) = try SharedRing.create(capacity: capacity)
        defer { close(memfd) }
        let supervisorSide = try SharedRing(mapping: memfd, capacity: capacity)
        var fds: [Int32] = [0, 0]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds) == 0 else { throw POSIXError(.EIO) }
        defer { close(fds[0]); close(fds[1]) }
        let signal = eventfd(0, Int32(EFD_CLOEXEC | EFD_NONBLOCK))
        defer { close(signal) }
        // Every frame counts as close to the one before, however slow this machine is.
        let channel = WorkerChannel(fd: fds[0], directWriteSpacing: .max)
        // The channel keeps a copy of `signal` and takes the room eventfd.
        channel.attachEmitRing(emitRing, signal: signal, room: eventfd(0, Int32(EFD_CLOEXEC)))
        // No writer thread is started: a frame handed to it stays queued, out of the ring.
        for n in 0..<WorkerChannel.closeDirectWriteLimit {
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
        #expect(supervisorSide.prepareToWait())
        channel.send(.log, body: Array("one more".utf8))
        #expect(supervisorSide.readable()?.count == 0, "past the burst's first events, the writer batches them")
    }
}
