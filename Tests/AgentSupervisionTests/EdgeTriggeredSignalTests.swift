@testable import AgentLoop
import Foundation
import CAgentSystem
import Glibc
import Testing

/// The supervisor registers each worker's signal eventfd edge-triggered and never reads it
/// (a read per wake-up was a system call per event at low rates): each write must wake the
/// loop once, and a counter left unread must not wake it again.
@Suite(.ownThreads, .serialized) struct EdgeTriggeredSignalTests {
    /// Drives `loop` until `done` holds (at most 30 s: a loaded machine is slow, never wrong).
    func drive(_ loop: EventLoop, until done: () -> Bool) {
        let deadline = EventLoop.now() + 30
        while !done(), EventLoop.now() < deadline { loop.runOnce(maxWait: 0.05) }
    }

    func signal(_ fd: Int32) {
        var one: UInt64 = 1
        #expect(write(fd, &one, 8) == 8)
    }

    @Test func eachWriteWakesTheLoopOnceAndAnUnreadCounterNeverAgain() {
        let signal = eventfd(0, Int32(EFD_NONBLOCK) | Int32(EFD_CLOEXEC))
        #expect(signal >= 0)
        defer { close(signal) }
        let loop = EventLoop()
        loop.isolated {
            var calls = 0
            loop.register(signal, events: EventLoop.readable | EventLoop.edgeTriggered) { _ in calls += 1 }
            for expected in 1...3 {
                self.signal(signal)
                drive(loop) { calls == expected }
                #expect(calls == expected)
                // The counter is not zero (nobody reads it): level-triggered, every one of
                // these turns would report it again.
                for _ in 0..<5 { loop.runOnce(maxWait: 0.01) }
                #expect(calls == expected)
            }
            var count: UInt64 = 0
            #expect(read(signal, &count, 8) == 8)
            #expect(count == 3)
            loop.unregister(signal)
        }
    }
}
