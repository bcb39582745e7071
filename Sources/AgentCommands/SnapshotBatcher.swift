import AgentBase
import AgentLoop
import Foundation
import JSONSchema
import Synchronization

/// Answers the read-only commands made from an ``AgentSnapshot`` (`status`, `metrics`,
/// `readiness`) for many clients at the cost of one: every request that arrives while a
/// snapshot is asked of the loop and not yet taken joins it, so the loop takes one snapshot
/// (and wakes once) per turn however many requests wait, and the JSON is built and serialized
/// once per snapshot, off the loop. A request never gets a snapshot taken before it arrived:
/// a `status` right after a `process stop` sees the stop.
package final class SnapshotBatcher: Sendable {
    private let inbox: LoopInbox
    private let take: @LoopActor () -> AgentSnapshot
    /// The requests waiting for the snapshot asked of the loop (nil: none asked), and whether
    /// the loop takes no more commands.
    private let state = Mutex<(waiting: [CheckedContinuation<SharedSnapshot?, Never>]?, closed: Bool)>((nil, false))

    /// How a front defers asking the loop (see ``CommandCenter/deferSnapshotRequests(_:)``).
    package typealias Deferral = @Sendable (@escaping @Sendable () -> Void) -> Void
    /// Boxed: a bare closure in a generic lock is reabstracted on each inout access and
    /// written back wrapped in two more thunks, so every request made the next one dearer.
    private struct DeferralBox: Sendable { let deferral: Deferral }
    private let deferral = Mutex<DeferralBox?>(nil)

    package init(inbox: LoopInbox, take: @escaping @LoopActor () -> AgentSnapshot) {
        self.inbox = inbox
        self.take = take
    }

    package func deferRequests(_ deferral: @escaping Deferral) { self.deferral.withLock { $0 = DeferralBox(deferral: deferral) } }

    /// How many requests wait for the snapshot being asked (for tests).
    package var waitingCount: Int { state.withLock { $0.waiting?.count ?? 0 } }

    /// A snapshot taken after this call began; nil once the agent is stopping.
    package func snapshot() async -> SharedSnapshot? {
        await withCheckedContinuation { continuation in
            let post: Bool? = state.withLock { state in
                guard !state.closed else { return nil }
                if state.waiting != nil {
                    state.waiting!.append(continuation)
                    return false
                }
                state.waiting = [continuation]
                return true
            }
            guard let post else { return continuation.resume(returning: nil) }
            guard post else { return }
            let take = self.take
            let inbox = self.inbox
            let ask: @Sendable () -> Void = { [self] in
                inbox.post { [self] in
                    let waiting = state.withLock { state in
                        defer { state.waiting = nil }
                        return state.waiting ?? []
                    }
                    guard !waiting.isEmpty else { return }
                    let shared = SharedSnapshot(take())
                    for continuation in waiting { continuation.resume(returning: shared) }
                }
            }
            if let box = deferral.withLock({ $0 }) { box.deferral(ask) } else { ask() }
        }
    }

    /// Answers the waiting requests with nil and takes no more.
    package func close() {
        let waiting = state.withLock { state in
            state.closed = true
            defer { state.waiting = nil }
            return state.waiting ?? []
        }
        for continuation in waiting { continuation.resume(returning: nil) }
    }
}

/// A snapshot shared by the requests of one batch, with the answers made from it so far (each
/// made once, by the first request that needs it).
package final class SharedSnapshot: Sendable {
    package let snapshot: AgentSnapshot
    private let answers = Mutex<[String: CommandCenter.RenderedAnswer]>([:])

    package init(_ snapshot: AgentSnapshot) { self.snapshot = snapshot }

    /// The answer to `request` (`status`, `metrics` or `readiness`).
    package func answer(_ request: JSONValue) -> CommandCenter.RenderedAnswer {
        let name = request["command"]?.stringValue ?? ""
        // Requests with fields (the readiness rules) are cheap and not shared.
        let shareable = request.objectValue?.count == 1
        // Held while rendering: the others of the batch wait for this answer rather than
        // making it again.
        return answers.withLock { answers in
            if shareable, let done = answers[name] { return done }
            let json: JSONValue = switch name {
            case "status": snapshot.statusAnswer
            case "metrics": snapshot.metricsAnswer
            default: (try? JSONValueEncoder().encode(Readiness(request).answer(for: snapshot))) ?? CommandError(.failed, "the readiness answer could not be encoded").json
            }
            let rendered = CommandCenter.RenderedAnswer(json: json)
            if shareable { answers[name] = rendered }
            return rendered
        }
    }
}
