import Foundation
import Testing

/// Ends the test process when one test has run far longer than any test should, naming the
/// tests that were running: a hung test then fails the run in minutes, saying where it hung,
/// rather than holding CI until its own limit with nothing printed.
///
/// `timeLimit` traits do not do this: past its limit a test is cancelled, and the run still
/// waits for it to return — forever, if it waits on something that never answers and does not
/// look at cancellation.
package enum TestWatchdog {
    /// Longer than the slowest test takes on a loaded 2-core machine (a few minutes).
    package static let limit: Double = Double(ProcessInfo.processInfo.environment["AGENT_TEST_WATCHDOG"] ?? "") ?? 15 * 60

    private static let lock = NSLock()
    nonisolated(unsafe) private static var running: [Int: (name: String, since: Date)] = [:]
    nonisolated(unsafe) private static var next = 0
    private static let started: Void = {
        let thread = Thread { watch() }
        thread.name = "test watchdog"
        thread.start()
    }()

    /// Records `name` as running until the returned token is passed to ``end(_:)``.
    package static func begin(_ name: String) -> Int {
        _ = started
        return lock.withLock {
            next += 1
            running[next] = (name, Date())
            return next
        }
    }

    package static func end(_ token: Int) {
        lock.withLock { _ = running.removeValue(forKey: token) }
    }

    private static func watch() {
        while true {
            Thread.sleep(forTimeInterval: 10)
            let now = Date()
            let snapshot = lock.withLock { running.values.sorted { $0.since < $1.since } }
            guard let oldest = snapshot.first, now.timeIntervalSince(oldest.since) > limit else { continue }
            var report = "TestWatchdog: \(oldest.name) has run for \(Int(now.timeIntervalSince(oldest.since))) s "
            report += "(limit \(Int(limit)) s, AGENT_TEST_WATCHDOG); ending the test process. Running:\n"
            for test in snapshot { report += "  \(test.name): \(Int(now.timeIntervalSince(test.since))) s\n" }
            FileHandle.standardError.write(Data(report.utf8))
            exit(70)
        }
    }
}
