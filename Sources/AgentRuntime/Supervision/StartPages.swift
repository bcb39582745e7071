import AgentLoop
import CAgentSystem
import Foundation
import Logging

/// The code pages that only agent-control's start touched (argument parsing, the settings'
/// validation, the first spawns): about half of an idle supervisor's memory, given back once the
/// start is over.
///
/// The read-only segments of the executable and its libraries — code and constants; not data,
/// not relocated read-only data, none with a page copied on write — are unmapped with
/// `MADV_DONTNEED` (`agent_release_file_pages`, which workers and the fork server use too). The pages stay in the page cache: one used again is mapped again at its next touch
/// (a minor fault), so the resident memory becomes what the supervisor runs on.
package enum StartPages {
    /// What one release did: the bytes unmapped, or why nothing was.
    package struct Outcome: Sendable {
        package var bytes = 0
        package var problem: String?
    }

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

    /// Releases the read-only segments of this process's executable and libraries (see the type).
    package static func release() -> Outcome {
        var problem: Int32 = 0
        let bytes = agent_release_file_pages(&problem)
        return Outcome(bytes: bytes, problem: problem == 0 ? nil : "releasing the code pages: \(String(cString: strerror(problem)))")
    }
}
