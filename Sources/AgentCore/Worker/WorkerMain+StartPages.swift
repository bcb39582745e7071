import Foundation

extension WorkerMain {
    /// Whether the start's code pages are given back (`AGENT_RELEASE_START_PAGES=0` keeps them,
    /// as it does in agent-control; the fork server and the workers inherit its environment).
    static var releasesStartPages: Bool {
        guard let value = getenv("AGENT_RELEASE_START_PAGES").map({ String(cString: $0).lowercased() }) else { return true }
        return !["0", "no", "false", "off"].contains(value)
    }

    /// Seconds after the ready frame before a worker gives back its start's code pages: past
    /// the starts of its siblings (forks on the same cores) and the first work of a process.
    static let startPagesDelay = 1.0

    /// Drops the worker's mappings of the code and constants its start touched (``CleanFilePages``:
    /// loading the module, the runtime's first type lookups): an idle worker runs on a few of
    /// those pages, and each one mapped counts in its PSS. Once, on the main queue (the main
    /// thread waits in `dispatchMain`), ``startPagesDelay`` after the ready frame; what the
    /// process runs later is mapped again at its touch.
    static func releaseStartPagesLater() {
        guard releasesStartPages else { return }
        DispatchQueue.main.asyncAfter(deadline: .now() + startPagesDelay) {
            _ = CleanFilePages.release()
        }
    }
}
