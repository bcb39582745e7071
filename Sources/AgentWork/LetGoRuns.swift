/// The ids of runs recently let go from memory as large: bounded, oldest out first.
package struct LetGoRuns {
    private var ids: Set<String> = []
    private var order: [String] = []
    private var start = 0

    package func contains(_ id: String) -> Bool { ids.contains(id) }

    package mutating func insert(_ id: String, limit: Int) {
        guard ids.insert(id).inserted else { return }
        order.append(id)
        if order.count - start > limit {
            ids.remove(order[start])
            start += 1
            if start > limit {
                order.removeFirst(start)
                start = 0
            }
        }
    }
}
