import AgentLoop
import CAgentModuleKit
import CAgentSystem
import Foundation
import Logging

/// The code pages that only agent-control's start touched (argument parsing, the settings'
/// validation, the first spawns): about half of an idle supervisor's memory, given back once the
/// start is over.
///
/// The read-only segments of the executable and its libraries — code and constants; not data,
/// not relocated read-only data, none with a page copied on write — are unmapped with
/// `MADV_DONTNEED` (`agent_release_file_pages`, which workers and the fork server use too).
/// The pages stay in the page cache: one used again is mapped again at its next touch (a minor
/// fault), so the resident memory becomes what the supervisor runs on.
package enum StartPages {
    /// What one release did: the bytes unmapped, or why nothing was.
    package struct Outcome: Sendable {
        package var bytes = 0
        package var problem: String?
    }

    /// How often the supervisor looks whether it has mapped much code again.
    static let recheckInterval: Double = 30
    /// Resident file pages (`RssFile`, kB) over the steady state after the last release that
    /// make it release again: a command, a request or a reload mapped code again.
    static let regrowthKB = 2048

    /// Once `settled` says every first start has settled, gives back the code pages only the
    /// start touched, on a thread of its own (reading smaps takes a few ms). Looked at twice a
    /// second until then, not every turn; nothing once `stopping` says the agent stops. Then
    /// every ``recheckInterval`` it reads its resident file pages: the first look after a
    /// release sets the steady state (what it runs on mapped again), and a later one
    /// ``regrowthKB`` over it releases again. A single `status` maps ~8 MB of code again, which
    /// would otherwise stay mapped; what an agent at work maps again every turn is no reason.
    @LoopActor
    package static func releaseOnceSettled(loop: EventLoop, logger: Logger, stopping: @escaping @LoopActor () -> Bool, settled: @escaping @LoopActor () -> Bool) {
        loop.schedule(after: 0.5) {
            guard !stopping() else { return }
            guard settled() else { return releaseOnceSettled(loop: loop, logger: logger, stopping: stopping, settled: settled) }
            // The loop's thread went deepest in the start (arguments, settings, the store's
            // migrations): the stack pages below where it turns now are given back too.
            _ = agent_module_kit_trim_stack()
            releaseInBackground(logger: logger, what: "the start's code pages")
            releaseWhenMappedAgain(loop: loop, logger: logger, stopping: stopping, steadyKB: nil)
        }
    }

    @LoopActor
    private static func releaseWhenMappedAgain(loop: EventLoop, logger: Logger, stopping: @escaping @LoopActor () -> Bool, steadyKB: Int?) {
        loop.schedule(after: recheckInterval) {
            guard !stopping(), let residentKB = residentFileKB() else { return }
            guard let steadyKB else {
                logger.debug("code pages: \(residentKB >> 10) MB of file pages resident since the release (the steady state)")
                return releaseWhenMappedAgain(loop: loop, logger: logger, stopping: stopping, steadyKB: residentKB)
            }
            guard residentKB - steadyKB >= regrowthKB else {
                return releaseWhenMappedAgain(loop: loop, logger: logger, stopping: stopping, steadyKB: steadyKB)
            }
            releaseInBackground(logger: logger, what: "code pages mapped again (\((residentKB - steadyKB) >> 10) MB over the steady state)")
            releaseWhenMappedAgain(loop: loop, logger: logger, stopping: stopping, steadyKB: nil)
        }
    }

    private static func releaseInBackground(logger: Logger, what: String) {
        Thread.detachNewThread {
            let outcome = release()
            if let problem = outcome.problem {
                logger.debug("\(what) not all given back: \(problem) (\(outcome.bytes >> 20) MB of code unmapped)")
            } else {
                logger.debug("\(what) given back (\(outcome.bytes >> 20) MB of code unmapped)")
            }
        }
    }

    /// The process's resident file pages in kB, nil if unreadable (in C: the Swift of a file
    /// read and a split stayed mapped, 0.7 MB).
    private static func residentFileKB() -> Int? {
        let kB = agent_resident_file_kb()
        return kB >= 0 ? kB : nil
    }

    /// Releases the read-only segments of this process's executable and libraries (see the type).
    package static func release() -> Outcome {
        var problem: Int32 = 0
        let bytes = agent_release_file_pages(&problem)
        return Outcome(bytes: bytes, problem: problem == 0 ? nil : "releasing the code pages: \(String(cString: strerror(problem)))")
    }
}
