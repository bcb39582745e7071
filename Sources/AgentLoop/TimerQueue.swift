/// The loop's timers: a binary heap by deadline (then by id: the order they were set), and
/// the live ones' actions by id. A cancel removes the action only; its heap entry is dropped
/// when it comes up, or when dropped entries outnumber live ones (the heap is rebuilt). Setting,
/// cancelling and taking the soonest cost O(log n): with 10,000 workflow runs each waiting
/// with a timeout, an array scanned per cancel made one event that woke them all take 5.6 s.
struct TimerQueue<Action> {
    private var heap: [(deadline: Double, id: Int)] = []
    private var actions: [Int: Action] = [:]

    var isEmpty: Bool { actions.isEmpty }
    var count: Int { actions.count }

    mutating func insert(id: Int, deadline: Double, action: Action) {
        actions[id] = action
        heap.append((deadline, id))
        siftUp(heap.count - 1)
    }

    mutating func cancel(_ id: Int) {
        guard actions.removeValue(forKey: id) != nil else { return }
        if heap.count > 64, heap.count > 2 * actions.count { rebuild() }
    }

    /// The soonest live deadline, or nil.
    mutating func soonest() -> Double? {
        dropCancelledTop()
        return heap.first?.deadline
    }

    /// Takes the live timers due at `now`, soonest first (ties in the order they were set).
    mutating func popDue(_ now: Double) -> [(id: Int, action: Action)] {
        var due: [(id: Int, action: Action)] = []
        while let top = heap.first, top.deadline <= now {
            popTop()
            if let action = actions.removeValue(forKey: top.id) { due.append((top.id, action)) }
        }
        return due
    }

    /// Whether timer `id` is set and not cancelled nor run yet.
    func contains(_ id: Int) -> Bool { actions[id] != nil }

    private mutating func dropCancelledTop() {
        while let top = heap.first, actions[top.id] == nil { popTop() }
    }

    private mutating func popTop() {
        let last = heap.removeLast()
        guard !heap.isEmpty else { return }
        heap[0] = last
        siftDown(0)
    }

    private mutating func rebuild() {
        heap.removeAll { actions[$0.id] == nil }
        for index in stride(from: heap.count / 2 - 1, through: 0, by: -1) { siftDown(index) }
    }

    private static func precedes(_ a: (deadline: Double, id: Int), _ b: (deadline: Double, id: Int)) -> Bool {
        a.deadline < b.deadline || (a.deadline == b.deadline && a.id < b.id)
    }

    private mutating func siftUp(_ start: Int) {
        var child = start
        while child > 0 {
            let parent = (child - 1) / 2
            guard Self.precedes(heap[child], heap[parent]) else { return }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    private mutating func siftDown(_ start: Int) {
        var parent = start
        while true {
            let left = 2 * parent + 1
            guard left < heap.count else { return }
            var first = left
            if left + 1 < heap.count, Self.precedes(heap[left + 1], heap[left]) { first = left + 1 }
            guard Self.precedes(heap[first], heap[parent]) else { return }
            heap.swapAt(first, parent)
            parent = first
        }
    }
}
