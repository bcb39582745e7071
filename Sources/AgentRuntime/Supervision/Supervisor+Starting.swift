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
