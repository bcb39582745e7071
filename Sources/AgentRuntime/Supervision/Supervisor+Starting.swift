import AgentCommands
import AgentSupervision
import Foundation
extension Supervisor {
    /// Starts the workers of `list` one per loop turn: between two starts the loop handles
    /// what the started workers sent (their ready frames first of all), so the first process is
    /// running while later ones are still being forked, rather than after all of them.
    func startInTurns(_ list: [SupervisedProcess]) {
        table.pendingStarts.append(contentsOf: list)
        startNextPending()
    }

    /// Whether every enabled process has been started and is past `starting`: running, or
    /// failed, exited or waiting in backoff. A process that cannot start must not hold the whole
    /// agent back (systemd would kill it at TimeoutStartSec); `STATUS=` names it.
    var firstStartsSettled: Bool {
        // Every process waits in `pendingStarts` until it is spawned (then `starting`); the
        // fronts (the HTTP server) start beside them.
        table.pendingStarts.isEmpty && !fronts.starting && !processes.contains { !$0.isTaskExecutor && $0.state == .starting }
    }

    /// The launcher's fronts (the HTTP API and dashboard), started on their own thread beside
    /// the first spawns (see ``ControlFronts/startBeside(_:inbox:then:)``). One that cannot
    /// start (its port taken) stops the agent with exit status 1, the processes started
    /// meanwhile stopped as at any stop.
    package func startFronts(_ list: [any AgentFront]) {
        fronts.startBeside(list, inbox: inbox) { [self] failure in
            guard let failure else {
                let address = fronts.started.compactMap(\.address).first
                return logger.info("\(AgentLauncher.dashboardLine(address)); from another terminal: agent-control status, agent-control chat")
            }
            AgentLauncher.printError("\(failure)\nthe agent stops; the processes it started meanwhile are stopped")
            exitStatus = AgentLauncher.ExitCode.failure
            stopAll()
        }
    }

    /// Once every first start has settled, gives back the code pages only the start touched
    /// (``StartPages``), on a thread of its own (reading smaps takes a few ms). Looked at twice
    /// a second until then, not every turn.
    func releaseStartPagesOnceSettled() {
        guard releasesStartPages else { return }
        loop.schedule(after: 0.5) { [unowned self] in
            guard !stopping else { return }
            guard firstStartsSettled else { return releaseStartPagesOnceSettled() }
            let logger = logger
            Thread.detachNewThread {
                let outcome = StartPages.release()
                logger.debug("the start's code pages given back (of \(outcome.bytes >> 20) MB of code mapped)\(outcome.problem.map { "; \($0)" } ?? "")")
            }
        }
    }

    private func startNextPending() {
        while !table.pendingStarts.isEmpty {
            let process = table.pendingStarts.removeFirst()
            // Skipped: stopping, a process that a command or a reload has taken over since.
            guard !stopping, !process.hasWorker, process.state == .stopped, process.restartTimer == nil,
                  processes.contains(where: { $0 === process }) else { continue }
            spawn(process)
            break
        }
        if !table.pendingStarts.isEmpty {
            loop.schedule(after: 0) { [unowned self] in startNextPending() }
        }
    }
}
