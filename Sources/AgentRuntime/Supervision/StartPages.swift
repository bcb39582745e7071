import AgentCore
import AgentLoop
import Foundation
import Logging

/// The pages of code and constants that only the start touched (argument parsing, the
/// settings' validation, the first spawns), in agent-control's executable and in every library
/// it loaded (the Swift runtime, Foundation, ICU, SQLite, the C++ library): about half of an
/// idle supervisor's memory, given back once the start is over with ``CleanFilePages`` (which
/// the fork server and the workers run too). Only mappings whose every page is still the
/// file's are released; what the supervisor runs on is mapped again at its next touch.
package enum StartPages {
    /// Once `settled` says every first start has settled, gives back the code pages only the
    /// start touched, on a thread of its own (reading smaps takes a few ms). Looked at twice a
    /// second until then, not every turn; nothing once `stopping` says the agent stops.
    @LoopActor
    package static func releaseOnceSettled(loop: EventLoop, logger: Logger, stopping: @escaping @LoopActor () -> Bool, settled: @escaping @LoopActor () -> Bool) {
        loop.schedule(after: 0.5) {
            guard !stopping() else { return }
            guard settled() else { return releaseOnceSettled(loop: loop, logger: logger, stopping: stopping, settled: settled) }
            Thread.detachNewThread {
                let outcome = release()
                logger.debug("the start's code pages given back (of \(outcome.bytes >> 20) MB of code mapped)\(outcome.problem.map { "; \($0)" } ?? "")")
            }
        }
    }

    /// Releases this process's never-written file mappings: the bytes of the mappings
    /// released, or why nothing was.
    package static func release() -> CleanFilePages.Outcome {
        CleanFilePages.release()
    }
}
