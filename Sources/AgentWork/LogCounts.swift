/// How many times each thing happened, and whether this time is one the log tells: the 1st,
/// 10th, 100th… A cause that repeats (a trigger cycle stopped 65,536 times, a condition that
/// cannot decide each event) is one log line, then one per power of ten, not one per event.
package struct LogCounts {
    private var counts: [String: Int] = [:]

    package init() {}

    /// How many times `key` has happened so far.
    package func count(of key: String) -> Int { counts[key] ?? 0 }

    /// Counts one more `key`: its count when the log should say it now, else nil.
    package mutating func add(_ key: String) -> Int? {
        let count = (counts[key] ?? 0) + 1
        counts[key] = count
        return count == 1 || Self.isPowerOfTen(count) ? count : nil
    }

    /// " (N times so far)" after the first.
    package static func times(_ count: Int) -> String { count == 1 ? "" : " (\(count) times so far)" }

    private static func isPowerOfTen(_ value: Int) -> Bool {
        var value = value
        while value >= 10, value % 10 == 0 { value /= 10 }
        return value == 1
    }
}
