@testable import AgentLoop
import Testing

/// The loop's timers as a heap with cancels by id (``TimerQueue``): due ones come soonest
/// first and in the order they were set, a cancelled one never comes, and a heap of mostly
/// cancelled entries is rebuilt with the live ones only.
struct TimerQueueTests {
    @Test func dueTimersComeSoonestFirstAndTiesInTheOrderTheyWereSet() {
        var queue = TimerQueue<String>()
        queue.insert(id: 1, deadline: 3, action: "c")
        queue.insert(id: 2, deadline: 1, action: "a")
        queue.insert(id: 3, deadline: 2, action: "b1")
        queue.insert(id: 4, deadline: 2, action: "b2")
        queue.insert(id: 5, deadline: 9, action: "later")
        #expect(queue.soonest() == 1)
        #expect(queue.popDue(3).map(\.action) == ["a", "b1", "b2", "c"])
        #expect(queue.soonest() == 9 && queue.count == 1)
        #expect(queue.popDue(8).isEmpty)
    }

    @Test func aCancelledTimerNeverComesAndTheHeapKeepsOnlyWhatLives() {
        var queue = TimerQueue<Int>()
        for id in 1...10_000 { queue.insert(id: id, deadline: Double(id), action: id) }
        for id in 1...10_000 where id % 100 != 0 { queue.cancel(id) }
        #expect(queue.count == 100)
        #expect(queue.soonest() == 100)
        queue.cancel(100)
        queue.cancel(100)
        #expect(!queue.contains(100) && queue.contains(200))
        let due = queue.popDue(10_000)
        #expect(due.map(\.action) == Array(stride(from: 200, through: 10_000, by: 100)))
        #expect(queue.isEmpty && queue.soonest() == nil)
    }
}
