import AgentLoop

/// The finished runs kept in memory (``recent``): the newest ``recentLimit``, of which at most
/// ``recentLargeLimit`` with a large input or output; answers that must not wait for the
/// store's writer read them.
extension TaskCoordinator {
    package func remember(_ run: TaskRun) {
        if recent[run.id] == nil {
            if Self.isLarge(run) { rememberLarge(run.id) }
            recentOrder.append(run.id)
            if recentOrder.count - recentStart > recentLimit {
                recent[recentOrder[recentStart]] = nil
                attemptLog.forget(recentOrder[recentStart])
                recentStart += 1
                // Compact now and then, so that the list does not grow with the agent's life.
                if recentStart > recentLimit {
                    recentOrder.removeFirst(recentStart)
                    recentStart = 0
                }
            }
        }
        var kept = run
        // A large input as its text alone; a small one as its value (its runner had the text).
        kept.held.compact()
        kept.held.dropText()
        recent[run.id] = kept
    }

    /// Finished runs with a large input or output kept in memory, at most: each may hold MBs
    /// (a MiB of output is ~13 MB of values). The store has the others; without one they are
    /// gone (as runs past ``recentLimit`` are).
    nonisolated package static let recentLargeLimit = 8

    /// Whether `run` holds a large input (held as its text, or a value: a workflow step's) or
    /// output.
    nonisolated static func isLarge(_ run: TaskRun) -> Bool {
        let limit = RunInput.textOnlyFrom
        if run.held.isTextOnly || run.held.textBytes >= limit { return true }
        return run.input.serializedLength(atMost: limit) == nil || run.output.map { $0.serializedLength(atMost: limit) == nil } == true
    }

    /// Counts a large run among the recent; the oldest past ``recentLargeLimit`` is let go
    /// (`task show` then reads it from the store).
    private func rememberLarge(_ id: String) {
        recentLarge.append(id)
        guard recentLarge.count - recentLargeStart > Self.recentLargeLimit else { return }
        let gone = recentLarge[recentLargeStart]
        recent[gone] = nil
        attemptLog.forget(gone)
        letGo.insert(gone, limit: recentLimit)
        recentLargeStart += 1
        if recentLargeStart > Self.recentLargeLimit {
            recentLarge.removeFirst(recentLargeStart)
            recentLargeStart = 0
        }
    }
}
