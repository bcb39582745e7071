import AgentBase
import AgentLoop
import Foundation
import JSONSchema

/// Signals to one run (Temporal's model): `workflow_signal` releases a waiting `wait_signal`
/// step of its name, or is kept by the run — committed with it, so that an acknowledged signal
/// survives a crash — until the first such step starts and takes it. Never broadcast.
extension WorkflowEngine {
    /// Signals a run keeps, not taken by a step, at most: a sender that signals a name no step
    /// waits for is told, rather than growing the run's record without bound.
    nonisolated package static let signalsKept = 100
    /// Bytes of payload the kept signals of a run may hold together: the run's record is
    /// written again with each change of the run.
    nonisolated package static let signalBytesKept = 1 << 20

    /// `workflow_signal`: answered once committed (the released step's end, or the kept signal).
    /// The payload is checked and measured off the loop.
    package func signal(_ request: WorkflowSignalCommand.Request, by sender: String,
                        respond: @escaping (Result<WorkflowSignalCommand.Answer, CommandError>) -> Void) {
        if let problem = PlainName.problem(request.name, what: "signal name") { return respond(.failure(.invalid(problem, pointer: "/name"))) }
        if store?.keepsChangesNow == false { return respond(.failure(TaskCoordinator.storeError("signal was not taken"))) }
        let payload = request.payload ?? .object([:])
        let limit = payloadLimit
        let reply = LoopOwned(respond)
        let inbox = loop.inbox
        Task.detached {
            let checked = EventSettings.checkPayload(payload, limit: limit)
            inbox.post { [self] in
                switch checked {
                case .failure(let problem):
                    reply.value(.failure(problem))
                case .success(let body):
                    var signal = WorkflowSignal(name: request.name, payload: payload, time: Date().timeIntervalSince1970, by: sender)
                    signal.bytes = body.count
                    deliver(signal, to: request.id, respond: reply.value)
                }
            }
        }
    }

    /// Hands a checked signal to its run: to its waiting step, else kept by the run.
    private func deliver(_ signal: WorkflowSignal, to id: String, respond: @escaping (Result<WorkflowSignalCommand.Answer, CommandError>) -> Void) {
        guard let state = live[id] else { return refuseSignal(to: id, respond: respond) }
        var answer = WorkflowSignalCommand.Answer(run: id, name: signal.name, kept: false)
        if let step = waitingStep(for: signal.name, in: state) {
            finishStep(state, step, .succeeded, output: signal.output)
            answer.step = step
        } else {
            let kept = state.run.signals.reduce(0) { $0 + $1.bytes }
            guard state.run.signals.count < Self.signalsKept, kept + signal.bytes <= Self.signalBytesKept else {
                return respond(.failure(.conflict("no wait_signal step of run \(id) waits for \"\(signal.name)\", and the run cannot keep this signal (\(signal.bytes) bytes of payload) beside the \(state.run.signals.count) it keeps (\(kept) bytes): a run keeps at most \(Self.signalsKept) signals, \(Self.signalBytesKept) bytes together (see `agent-control workflow show \(id)`)")))
            }
            state.run.signals.append(signal)
            state.runDirty = true
            commit(state, [])
            answer.kept = true
        }
        afterCommit(id) { kept in
            guard kept else {
                // Taken in memory: sent again, it would be a second signal.
                return respond(.failure(TaskCoordinator.notKept("the run \(id) took the signal \"\(signal.name)\"", undone: "the run goes back to before it", advice: "; do not send it again")))
            }
            respond(.success(answer))
        }
    }

    /// A run that is not unfinished here: finished (409), unknown (404), or unfinished in the
    /// store but not held by this agent (a fleet's run another agent holds: 409).
    private func refuseSignal(to id: String, respond: @escaping (Result<WorkflowSignalCommand.Answer, CommandError>) -> Void) {
        if let finished = unwritten(id) { return respond(.failure(Self.finishedRun(finished.run))) }
        guard let store else { return respond(.failure(Self.noRunToSignal(id))) }
        let reply = LoopOwned(respond)
        let inbox = loop.inbox
        Task.detached {
            let found = try? await store.run(id: id)
            inbox.post {
                guard let run = found?.run else { return reply.value(.failure(WorkflowEngine.noRunToSignal(id))) }
                reply.value(.failure(run.status.isFinished ? WorkflowEngine.finishedRun(run)
                    : .conflict("the run \(id) is unfinished but not held by this agent (another agent of the fleet holds it); send the signal to that agent")))
            }
        }
    }

    nonisolated private static func finishedRun(_ run: WorkflowRun) -> CommandError {
        .conflict("the run \(run.id) has finished (\(run.status.rawValue)); a signal goes to an unfinished run")
    }

    nonisolated private static func noRunToSignal(_ id: String) -> CommandError {
        .notFound("no workflow run \(id); `agent-control workflow runs` lists them")
    }

    /// The `wait_signal` step of `name` that waits in the run, launched (its start committed),
    /// the one that started first; nil if none.
    private func waitingStep(for name: String, in state: LiveRun) -> String? {
        state.steps.values
            .filter { $0.kind == "wait_signal" && $0.status == .waiting && $0.detail["signal"]?.stringValue == name && state.launched.contains($0.stepID) }
            .min { ($0.startedAt, $0.stepID) < ($1.startedAt, $1.stepID) }?.stepID
    }

    /// A `wait_signal` step launched (now, or again after a restart): it takes the oldest signal
    /// of its name the run keeps, if any — the step's end and the signal's removal in one commit.
    func takeKeptSignal(_ name: String, for step: String, _ state: LiveRun) {
        guard let index = state.run.signals.firstIndex(where: { $0.name == name }) else { return }
        let signal = state.run.signals.remove(at: index)
        state.runDirty = true
        finishStep(state, step, .succeeded, output: signal.output)
    }
}
