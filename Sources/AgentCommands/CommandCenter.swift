import AgentBase
import AgentCore
import AgentLoop
import Foundation
import JSONSchema
import Synchronization

/// The one command layer: every front (the control socket, the HTTP API, the dashboard)
/// executes a command by handing its request to the supervisor's loop and awaiting the
/// answer. The loop stays the only owner of supervision state; a front never touches it.
///
/// A request is a JSON object `{"command": NAME, …}` as declared in ``CommandRegistry``; the
/// answer is `{"ok": true, …}` or `{"ok": false, "error": …, "code": …}`.
public final class CommandCenter: Sendable {
    /// Who asked (the type lives in the base layer, so that features can take it).
    public typealias Caller = CommandCaller

    /// An answer with its JSON text, made once however many requests share it.
    public struct RenderedAnswer: Sendable {
        public let json: JSONValue
        /// `json` serialized as UTF-8 (compact, no trailing newline).
        public let bytes: [UInt8]

        public init(json: JSONValue) {
            self.json = json
            // Written once per snapshot and sent to every request that waited for it.
            bytes = json.serializedBytes(capacity: 8 << 10)
        }

        /// `json` serialized (compact, no trailing newline).
        public var text: String { String(decoding: bytes, as: UTF8.self) }
    }

    /// The commands answered from a snapshot of the agent (see ``SnapshotBatcher``).
    package static let snapshotCommands: Set<String> = ["status", "metrics", "readiness"]

    /// Whether `command` is answered from a snapshot of the agent, the same for every caller.
    public static func answersFromSnapshot(_ command: String) -> Bool { snapshotCommands.contains(command) }

    private let inbox: LoopInbox
    private let snapshots: SnapshotBatcher
    /// The store to read for `events` and `history` (nil: the store is off).
    private let storePath: String?
    /// Runs its argument once the writes queued so far are committed (nil: nothing to wait for).
    private let whenWritten: (@Sendable (@escaping @Sendable () -> Void) -> Void)?
    /// Executes a request on the loop (the supervisor's ``execute``).
    private let handler: @LoopActor (CheckedRequest, Caller, @escaping (JSONValue) -> Void) -> Void
    /// Writes an audit line to the run history.
    private let recorder: @LoopActor (Caller, String) -> Void
    /// Requests posted to the loop and not yet answered, so that a close answers them.
    private let pending = Mutex<(closed: Bool, next: Int, waiting: [Int: CheckedContinuation<JSONValue, Never>])>((false, 0, [:]))

    package init(inbox: LoopInbox, storePath: String?, whenWritten: (@Sendable (@escaping @Sendable () -> Void) -> Void)? = nil,
                 snapshot: @escaping @LoopActor () -> AgentSnapshot,
         handler: @escaping @LoopActor (CheckedRequest, Caller, @escaping (JSONValue) -> Void) -> Void,
         recorder: @escaping @LoopActor (Caller, String) -> Void = { _, _ in }) {
        self.inbox = inbox
        snapshots = SnapshotBatcher(inbox: inbox, take: snapshot)
        self.storePath = storePath
        self.whenWritten = whenWritten
        self.handler = handler
        self.recorder = recorder
    }

    /// Records what a front did that is no command (a login, a failed login) in the run
    /// history as an `audit` line: `http user alice from 127.0.0.1:5000: login → refused: …`.
    /// Any thread; returns at once (the line is written on the loop).
    public func recordAudit(_ detail: String, caller: Caller) {
        let recorder = self.recorder
        let closed = pending.withLock { $0.closed }
        guard !closed else { return }
        inbox.post { recorder(caller, detail) }
    }

    /// Lets a front delay asking the loop for a snapshot until the requests it has already read
    /// have joined the batch: the HTTP front runs `ask` after the handlers its event loop
    /// has queued, so the requests read in one tick share one snapshot and one rendering
    /// (without it, the loop's thread took the snapshot for the first before the rest joined).
    /// `ask` must run soon, on any thread.
    public func deferSnapshotRequests(_ deferral: @escaping @Sendable (_ ask: @escaping @Sendable () -> Void) -> Void) {
        snapshots.deferRequests(deferral)
    }

    /// The answer a front gets once the agent is stopping and its loop takes no more commands.
    public static let stoppingAnswer = CommandAnswer.stopping

    /// Executes a checked request on the supervisor's loop. Any thread; never blocks the
    /// caller's thread.
    public func execute(_ request: CheckedRequest, caller: Caller) async -> JSONValue {
        await executeRendered(request, caller: caller).json
    }

    /// Checks a request a front builds itself (`/metrics`, `/readyz`, a stream's next page)
    /// with ``CommandRegistry/check(_:)`` and executes it; its refusal otherwise.
    public func execute(_ request: JSONValue, caller: Caller) async -> JSONValue {
        switch CommandRegistry.standard.check(request) {
        case .success(let checked): return await execute(checked, caller: caller)
        case .failure(let refusal): return refusal.json
        }
    }

    /// Executes a checked request and gives its answer with the answer's JSON text. `status`
    /// and `metrics` answers are built and serialized once for all the requests that waited
    /// for the same turn of the loop (see ``SnapshotBatcher``).
    public func executeRendered(_ request: CheckedRequest, caller: Caller) async -> RenderedAnswer {
        if Self.snapshotCommands.contains(request.name) {
            guard let shared = await snapshots.snapshot() else { return RenderedAnswer(json: Self.stoppingAnswer) }
            return shared.answer(request.json)
        }
        return RenderedAnswer(json: await executeOnLoop(request, caller: caller))
    }

    private func executeOnLoop(_ request: CheckedRequest, caller: Caller) async -> JSONValue {
        if let readStore = request.command.readStore {
            // A query can take a while: on threads of its own, neither a front's (the HTTP
            // front runs its handlers on its event loop) nor the cooperative pool's.
            let storePath = storePath
            let decoded = request.decoded
            // After the writes queued before it (a chat's lines are committed after its answer).
            if let whenWritten { await withCheckedContinuation { (written: CheckedContinuation<Void, Never>) in whenWritten { written.resume() } } }
            return await BlockingPool.storeReads.run { Self.normalized(readStore(decoded, storePath, caller)) }
        }
        return await withCheckedContinuation { continuation in
            let id: Int? = pending.withLock { state in
                guard !state.closed else { return nil }
                state.next += 1
                state.waiting[state.next] = continuation
                return state.next
            }
            guard let id else { return continuation.resume(returning: Self.stoppingAnswer) }
            let handler = self.handler
            inbox.post { [self] in
                handler(request, caller) { answer in self.finish(id, answer) }
            }
        }
    }

    /// Whether the loop runs what is posted to it within `seconds` (`/livez`).
    public func loopAnswers(within seconds: Double) async -> Bool {
        let answered = LockedValue<CheckedContinuation<Bool, Never>?>(nil)
        return await withCheckedContinuation { continuation in
            answered.withLock { $0 = continuation }
            inbox.post { answered.withLock { $0.take() }?.resume(returning: true) }
            Task {
                try? await Task.sleep(nanoseconds: UInt64(saturating: seconds * 1e9))
                answered.withLock { $0.take() }?.resume(returning: false)
            }
        }
    }

    /// Every refusal has an `error` (a reload's list of errors joined) and a `code`.
    package static func normalized(_ answer: JSONValue) -> JSONValue {
        guard answer["ok"]?.boolValue == false, case .object(var object) = answer else { return answer }
        if object["error"] == nil {
            let errors = object["errors"]?.arrayValue?.compactMap { $0.stringValue ?? $0["message"]?.stringValue } ?? []
            object["error"] = .string(errors.isEmpty ? "the command failed" : errors.joined(separator: "\n"))
        }
        if object["code"] == nil { object["code"] = "failed" }
        return .object(object)
    }

    private func finish(_ id: Int, _ answer: JSONValue) {
        pending.withLock { $0.waiting.removeValue(forKey: id) }?.resume(returning: answer)
    }

    /// Takes no more commands and answers the ones still waiting. Called by the supervisor
    /// before its loop stops draining.
    package func close() {
        snapshots.close()
        let waiting = pending.withLock { state in
            state.closed = true
            defer { state.waiting = [:] }
            return state.waiting
        }
        for continuation in waiting.values { continuation.resume(returning: Self.stoppingAnswer) }
    }
}
