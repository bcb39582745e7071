#if Fleet
import Foundation
import Synchronization

/// Whether an agent has joined its fleet: the database answered and the schema is migrated.
/// An agent starts without it (its local processes never wait for the database); the writers
/// wait here before their first write, the loop's fleet work begins when it is joined
/// (``whenJoined(_:)``), and until then ``pending`` says why the fleet is degraded.
final class FleetJoin: Sendable {
    private struct State {
        var joined = false
        /// The store closed before it joined: nothing waits any longer.
        var ended = false
        /// Why the last attempt to join failed (nil: none failed yet).
        var problem: String?
        var waiters: [UInt64: CheckedContinuation<Void, Never>] = [:]
        var nextWaiter: UInt64 = 0
        var actions: [@Sendable () -> Void] = []
    }

    private let state = Mutex(State())
    /// What ``pending`` says before the first attempt has ended.
    private let url: String

    init(url: String) { self.url = url }

    var isJoined: Bool { state.withLock { $0.joined } }

    /// Whether the first attempt to join has ended (joined, or failed).
    var hasTried: Bool { state.withLock { $0.joined || $0.problem != nil } }

    /// Why the fleet is degraded because it has not joined yet (nil once it has).
    var pending: String? {
        state.withLock { state in
            guard !state.joined else { return nil }
            return "not joined yet: " + (state.problem ?? "waiting for the first answer of \(url)")
        }
    }

    /// Records why an attempt to join failed; true for the first failure (the one to log).
    @discardableResult
    func failed(_ problem: String) -> Bool {
        state.withLock { state in
            defer { state.problem = problem }
            return state.problem == nil
        }
    }

    /// The database answered: every waiter goes on, every action runs (on this thread).
    func markJoined() {
        let (waiters, actions) = state.withLock { state -> ([CheckedContinuation<Void, Never>], [@Sendable () -> Void]) in
            guard !state.joined else { return ([], []) }
            state.joined = true
            defer { state.waiters = [:]; state.actions = [] }
            return (Array(state.waiters.values), state.actions)
        }
        for waiter in waiters { waiter.resume() }
        for action in actions { action() }
    }

    /// Calls `action` once joined: now if it is, else from the thread that joins.
    func whenJoined(_ action: @escaping @Sendable () -> Void) {
        let now = state.withLock { state -> Bool in
            if state.joined { return true }
            state.actions.append(action)
            return false
        }
        if now { action() }
    }

    /// The store closes: whoever waits goes on (to find it closed).
    func end() {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.ended = true
            defer { state.waiters = [:] }
            return Array(state.waiters.values)
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Returns once joined, ended, or the task is cancelled.
    func wait() async {
        let id = state.withLock { state -> UInt64? in
            guard !state.joined, !state.ended else { return nil }
            state.nextWaiter += 1
            return state.nextWaiter
        }
        guard let id else { return }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let goOn = state.withLock { state -> Bool in
                    if state.joined || state.ended || Task.isCancelled { return true }
                    state.waiters[id] = continuation
                    return false
                }
                if goOn { continuation.resume() }
            }
        } onCancel: {
            state.withLock { $0.waiters.removeValue(forKey: id) }?.resume()
        }
    }
}
#endif
