import Foundation

/// The first part of the ids an agent gives its task and workflow runs (`<prefix>-<n>`): the
/// start time in ms, base 36, then three random base-36 characters. The time keeps ids apart
/// across restarts of one agent and sorts them by start; the random part keeps apart agents
/// started in the same millisecond — agents of one fleet share their runs' table, and two test
/// agents started together were given the same run ids.
enum RunIDPrefix {
    static func make(now: Double = Date().timeIntervalSince1970) -> String {
        let time = String(UInt64(min(max(now * 1000, 0), 1e15)), radix: 36)
        let random = String(UInt32.random(in: 0..<46_656), radix: 36)
        return time + String(repeating: "0", count: 3 - random.count) + random
    }
}
