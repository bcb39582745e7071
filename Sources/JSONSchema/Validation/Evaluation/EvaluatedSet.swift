/// A growable bit set of positions, with a shortcut for "everything".
struct EvaluatedSet {
    private(set) var containsAll = false
    private var words: [UInt64] = []

    func contains(_ i: Int) -> Bool {
        if containsAll { return true }
        let word = i >> 6
        return word < words.count && words[word] & (1 << UInt64(i & 63)) != 0
    }

    mutating func insert(_ i: Int) {
        guard !containsAll else { return }
        let word = i >> 6
        if word >= words.count { words.append(contentsOf: repeatElement(0, count: word - words.count + 1)) }
        words[word] |= 1 << UInt64(i & 63)
    }

    /// Inserts `0..<count`.
    mutating func insert(upTo count: Int) {
        for i in 0..<count { insert(i) }
    }

    mutating func insertAll() {
        containsAll = true
        words = []
    }

    mutating func formUnion(_ other: EvaluatedSet) {
        if containsAll { return }
        if other.containsAll {
            insertAll()
            return
        }
        if other.words.count > words.count {
            words.append(contentsOf: repeatElement(0, count: other.words.count - words.count))
        }
        for (i, word) in other.words.enumerated() { words[i] |= word }
    }
}
