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
    package func signal(_ request: WorkflowSignalCommand.Request, by sender: String,
                        respond: @escaping (Result<WorkflowSignalCommand.Answer, CommandError>) -> Void) {
        let payload = request.payload ?? .object([:])
        if let problem = signalProblem(name: request.name, payload: payload) { return respond(.failure(problem)) }
        guard let state = live[request.id] else { return refuseSignal(to: request.id, respond: respond) }
        let signal = WorkflowSignal(name: request.name, payload: payload, time: Date().timeIntervalSince1970, by: sender)
        var answer = WorkflowSignalCommand.Answer(run: request.id, name: request.name, kept: false)
        if let step = waitingStep(for: request.name, in: state) {
            finishStep(state, step, .succeeded, output: signal.output)
            answer.step = step
        } else {
            let kept = state.run.signals.reduce(0) { $0 + $1.payload.serialized().utf8.count }
            guard state.run.signals.count < Self.signalsKept, kept + payload.serialized().utf8.count <= Self.signalBytesKept else {
                return respond(.failure(.conflict("the run \(request.id) keeps \(state.run.signals.count) signals (\(kept) bytes of payload) already that no wait_signal step has taken (at most \(Self.signalsKept), \(Self.signalBytesKept) bytes; see `agent-control workflow show \(request.id)`); it takes no more")))
            }
            state.run.signals.append(signal)
            state.runDirty = true
            commit(state, [])
            answer.kept = true
        }
        afterCommit(request.id) { respond(.success(answer)) }
    }

    /// Why a signal cannot be sent as it is (its name, its payload's size or depth), or nil.
    private func signalProblem(name: String, payload: JSONValue) -> CommandError? {
        if let problem = PlainName.problem(name, what: "signal name") { return .invalid(problem, pointer: "/name") }
        if let path = InputNesting.pathBeyond(payload, limit: EventSettings.deepestPayload) {
            let pointer = "/payload" + path.map { "/" + JSONPointer.escape($0) }.joined()
            return .invalid("the payload nests arrays and objects more than \(EventSettings.deepestPayload) levels deep (found a level \(EventSettings.deepestPayload + 1) at \(pointer)); flatten it", pointer: pointer)
        }
        let size = payload.serialized().utf8.count
        guard size <= payloadLimit else {
            return CommandError(.tooLarge, "the payload is \(size) bytes of JSON; at most \(payloadLimit) are accepted (/events/max_payload_bytes in the settings)", pointer: "/payload")
        }
        return nil
    }

    /// A run that is not unfinished here: finished (409), unknown (404), or unfinished in the
    /// store but not held by this agent (a fleet's run another agent holds: 409).
    private func refuseSignal(to id: String, respond: @escaping (Result<WorkflowSignalCommand.Answer, CommandError>) -> Void) {
        if let finished = known(id) { return respond(.failure(Self.finishedRun(finished.run))) }
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
