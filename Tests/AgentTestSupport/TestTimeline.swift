import Foundation

/// With `AGENT_TEST_TIMELINE=FILE`, a line appended to FILE for each test body that ran on
/// ``TestThreads``: when it got its slot and when it ended, in seconds since the first body of
/// its process began, and its name (tab-separated). It shows where a run's time goes: which
/// bodies held the slots while others waited, and what ran alone at the end. The file is
/// appended to, never emptied (exit tests run in processes of their own that write there too).
package enum TestTimeline {
    private static let origin = Date()
    private static let descriptor: Int32? = {
        guard let path = ProcessInfo.processInfo.environment["AGENT_TEST_TIMELINE"], !path.isEmpty else { return nil }
        let descriptor = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else {
            FileHandle.standardError.write(Data("TestTimeline: cannot open AGENT_TEST_TIMELINE=\(path) (errno \(errno)); no timeline is kept\n".utf8))
            return nil
        }
        return descriptor
    }()

    /// The moment a body got its slot, for ``record(_:since:)``.
    package static func now() -> Double { Date().timeIntervalSince(origin) }

    /// Records that the body `name` ran from `start` (from ``now()``) until now: one write, so
    /// that lines of bodies ending at once, or of other processes, never interleave.
    package static func record(_ name: String, since start: Double) {
        guard let descriptor else { return }
        let line = Array((String(format: "%.2f\t%.2f\t", start, now()) + name + "\n").utf8)
        _ = line.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
    }
}
