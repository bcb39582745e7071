import Foundation
import Synchronization

/// The HTTP front's open connections per client address, shared by all its connections: the
/// bound that keeps one client (a slowloris holding half-sent requests, a pool gone wrong)
/// from taking every slot of `max_connections`.
final class ClientConnectionCounts: Sendable {
    private struct State {
        var open: [String: Int] = [:]
        var refused = PacedCount()
        var slowBodies = PacedCount()
    }

    /// Things that happened since the last log line about them, and when that line was written.
    private struct PacedCount {
        var count = 0
        var lastLog: ContinuousClock.Instant?

        /// Counts one; the count since the last line when a line is due (then starts over).
        mutating func note() -> Int? {
            count += 1
            let now = ContinuousClock.now
            if let lastLog, now - lastLog < ClientConnectionCounts.logInterval { return nil }
            defer { count = 0; lastLog = now }
            return count
        }
    }

    private let state = Mutex(State())

    /// At most one line about refusals per this many seconds: a flood must not flood the log.
    static let logInterval: Duration = .seconds(10)

    /// Counts a connection of `address` when it holds fewer than `limit`; false (not counted)
    /// otherwise.
    func open(_ address: String, limit: Int) -> Bool {
        state.withLock { state in
            let count = state.open[address, default: 0]
            guard count < limit else { return false }
            state.open[address] = count + 1
            return true
        }
    }

    /// A counted connection of `address` closed.
    func close(_ address: String) {
        state.withLock { state in
            let count = state.open[address, default: 0] - 1
            state.open[address] = count > 0 ? count : nil
        }
    }

    /// Connections `address` holds now.
    func count(_ address: String) -> Int { state.withLock { $0.open[address, default: 0] } }

    /// Notes a refused connection; returns how many were refused since the last line, when a
    /// line is due.
    func noteRefusal() -> Int? {
        state.withLock { $0.refused.note() }
    }

    /// Notes a connection closed because its request's body stopped coming; as ``noteRefusal()``.
    func noteSlowBody() -> Int? {
        state.withLock { $0.slowBodies.note() }
    }
}
