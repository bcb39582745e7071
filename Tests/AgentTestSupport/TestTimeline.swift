import Foundation

/// With `AGENT_TEST_TIMELINE=FILE`, a line appended to FILE for each body of an `.ownThreads`
/// suite: when it got its slot and when it ended (seconds of CLOCK_MONOTONIC, one clock for
/// every process of the machine), the test process's pid and the test's ID, tab-separated. It
/// shows where a run's time went: which bodies held the slots while others waited, and what
/// ran alone at the end. The file is appended to, never emptied: exit tests run in processes
/// of their own that write there too, and the pid tells the runs apart.
package enum TestTimeline {
    private static let descriptor: Int32? = {
        guard let path = ProcessInfo.processInfo.environment["AGENT_TEST_TIMELINE"], !path.isEmpty else { return nil }
        let descriptor = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else {
            FileHandle.standardError.write(Data("TestTimeline: cannot open AGENT_TEST_TIMELINE=\(path) (errno \(errno)); no timeline is kept\n".utf8))
            return nil
        }
        return descriptor
    }()

    /// Now, for ``record(_:since:)``.
    package static func now() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }

    /// Records that a body of the test `name` ran from `start` (from ``now()``) until now: one
    /// write, so that the lines of bodies ending at once, or of other processes, never interleave.
    package static func record(_ name: String, since start: Double) {
        guard let descriptor else { return }
        let line = Array((String(format: "%.2f\t%.2f\t%d\t", start, now(), getpid()) + name + "\n").utf8)
        _ = line.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
    }
}
