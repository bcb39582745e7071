import AgentLoop
import Foundation

/// `logs -f`'s failed requests in a row: each is said on stderr and tried again after 200 ms,
/// until they have failed for a minute.
struct FollowRetries {
    static let patience = 60.0
    private var since: Double?

    /// True when the request should be sent again (after a pause); false when it has failed
    /// for too long.
    mutating func again(after failure: String) -> Bool {
        let now = EventLoop.now()
        let start = since ?? now
        since = start
        guard now - start < Self.patience else { return false }
        FileHandle.standardError.write(Data("(logs: \(failure); trying again)\n".utf8))
        usleep(200_000)
        return true
    }

    mutating func succeeded() { since = nil }
}
