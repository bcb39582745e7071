@testable import AgentLoop
import AgentTestSupport
import Foundation
import Testing

/// The loop's inbox runs a burst of posted work a few milliseconds per turn, in the order it
/// was posted, ahead of what is posted meanwhile.
@Suite(.ownThreads) struct LoopInboxTests {
    /// Busy for at least `seconds` of the monotonic clock (certain, whatever the machine's load).
    static func busy(_ seconds: Double) {
        let until = EventLoop.now() + seconds
        while EventLoop.now() < until {}
    }

    @Test func aBurstOfPostedWorkRunsOverSeveralTurnsInTheOrderItWasPosted() {
        let loop = EventLoop()
        loop.isolated {
            final class Order: @unchecked Sendable { var ran: [Int] = [] }
            let order = Order()
            // Each item takes at least 1 ms: ten of them cannot all fit in one drain's slice.
            for index in 0..<10 {
                loop.inbox.post {
                    Self.busy(0.001)
                    order.ran.append(index)
                    // Posted during the drain: runs after the items left for the next turn.
                    if index == 0 { loop.inbox.post { order.ran.append(100) } }
                }
            }
            loop.runOnce(maxWait: 1)
            let firstTurn = order.ran.count
            #expect(firstTurn >= 1 && firstTurn < 10, "one turn ran \(firstTurn) of 10 items of 1 ms, beyond the slice of \(LoopInbox.drainSlice * 1000) ms")
            for _ in 0..<100 where order.ran.count < 11 { loop.runOnce(maxWait: 1) }
            #expect(order.ran == Array(0..<10) + [100], "\(order.ran)")
        }
    }
}
