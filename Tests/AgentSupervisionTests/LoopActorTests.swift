import AgentBase
@testable import AgentLoop
import AgentTestSupport
import Foundation
import Testing

/// `LoopActor`'s executor is the thread that drives an `EventLoop`: jobs enqueued from other
/// threads run there, code already on it enters without a hop, code elsewhere cannot enter.
@Suite(.ownThreads, .serialized) struct LoopActorTests {
    /// Where a job ran: its thread, and whether that thread was driving a loop.
    struct Ran: Sendable, Equatable {
        let thread: pthread_t
        let onLoop: Bool

        /// This thread, and whether it drives a loop now.
        static var here: Ran { Ran(thread: pthread_self(), onLoop: LoopActor.isOnLoopThread) }
    }

    /// Drives `loop` on this thread until `done` holds (at most 30 s).
    func drive(_ loop: EventLoop, until done: () -> Bool) {
        let deadline = EventLoop.now() + 30
        while !done(), EventLoop.now() < deadline { loop.runOnce(maxWait: 0.05) }
    }

    @Test func aJobEnqueuedFromAnotherThreadRunsOnTheHomeLoopsThread() {
        let loop = EventLoop()
        loop.becomeHome()
        defer { loop.resignHome() }
        let ran = LockedValue<Ran?>(nil)
        Thread {
            Task { @LoopActor in ran.withLock { $0 = .here } }
        }.start()
        drive(loop) { ran.withLock { $0 } != nil }
        #expect(ran.withLock { $0 } == Ran(thread: pthread_self(), onLoop: true))
    }

    /// No other test makes a loop home (only `Supervisor.run()` does, and the tests that run a
    /// whole agent run it as a child process), so here there is none until the test makes one.
    @Test func aJobEnqueuedBeforeAnyHomeLoopWaitsForOne() {
        let ran = LockedValue<Ran?>(nil)
        let enqueued = LockedValue(false)
        Thread {
            Task { @LoopActor in ran.withLock { $0 = .here } }
            enqueued.withLock { $0 = true }
        }.start()
        let deadline = EventLoop.now() + 30
        while !enqueued.withLock({ $0 }), EventLoop.now() < deadline { usleep(1000) }
        #expect(ran.withLock { $0 } == nil)
        let loop = EventLoop()
        loop.becomeHome()
        defer { loop.resignHome() }
        drive(loop) { ran.withLock { $0 } != nil }
        #expect(ran.withLock { $0 } == Ran(thread: pthread_self(), onLoop: true))
    }

    @Test func loopCodeEntersTheActorWithoutAHopAndItsTasksStayOnItsLoop() {
        // Not the home loop: a task started by loop code runs on the loop that started it.
        let loop = EventLoop()
        loop.isolated {
            var order: [String] = []
            let ran = LockedValue<Ran?>(nil)
            loop.schedule(after: 0) {
                LoopActor.assumeIsolated {
                    LoopActor.shared.preconditionIsolated()
                    order.append("inside")
                    Task { @LoopActor in ran.withLock { $0 = .here } }
                }
                order.append("after")
            }
            drive(loop) { ran.withLock { $0 } != nil }
            #expect(order == ["inside", "after"])
            #expect(ran.withLock { $0 } == Ran(thread: pthread_self(), onLoop: true))
        }
    }

    @Test func postRunsIsolatedOnThatLoop() {
        let loop = EventLoop()
        let inbox = loop.inbox
        let ran = LockedValue<Ran?>(nil)
        Thread {
            inbox.post { ran.withLock { $0 = .here } }
        }.start()
        drive(loop) { ran.withLock { $0 } != nil }
        #expect(ran.withLock { $0 } == Ran(thread: pthread_self(), onLoop: true))
        #expect(!LoopActor.isOnLoopThread)
    }

    @Test func enteringTheActorOffTheLoopStopsTheProcess() async {
        await #expect(processExitsWith: .failure) {
            LoopActor.assumeIsolated {}
        }
        await #expect(processExitsWith: .failure) {
            LoopActor.shared.preconditionIsolated()
        }
    }
}
