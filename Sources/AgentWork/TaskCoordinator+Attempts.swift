import AgentBase
import AgentLoop
import Foundation

/// Each attempt of a run is a record of its own (``TaskAttempt``): begun in
/// ``start(_:definition:executor:person:)``, ended in ``endAttempt(_:definition:outcome:executionTime:)``
/// or by an interruption, carried on the run (``TaskRun/attemptRecord``) to the store, which
/// writes it beside the run. Without a store they are kept in memory with the runs
/// (``AttemptLog``).
extension TaskCoordinator {
    /// Who runs an attempt of `run`: the fleet agent holding it, else this agent.
    func attemptAgent(_ run: TaskRun) -> String? {
        shared?.holder ?? run.agent ?? agentName
    }

    /// The run's attempt record ended as `outcome` says (made from the run when it has none:
    /// a run found running at the start, from the store).
    func endAttemptRecord(_ run: inout TaskRun, _ outcome: TaskRunOutcome) {
        var record = run.attemptRecord ?? TaskAttempt(number: run.attempt, startedAt: run.startedAt, executor: run.executor, agent: attemptAgent(run))
        record.end(outcome, at: Date().timeIntervalSince1970)
        run.attemptRecord = record
    }

    /// The run's attempt record ended from outside the work.
    func interruptAttemptRecord(_ run: inout TaskRun, _ error: String) {
        var record = run.attemptRecord ?? TaskAttempt(number: run.attempt, startedAt: run.startedAt, executor: run.executor, agent: attemptAgent(run))
        record.interrupt(error, at: Date().timeIntervalSince1970)
        run.attemptRecord = record
    }

    /// `task_show`: the run and its attempts — from the store (off the loop), the run's own
    /// record of its last attempt winning (memory is newer than the store's writer); without a
    /// store, from memory.
    package func showRun(_ id: String, respond: @escaping (Result<TaskShowAnswer, CommandError>) -> Void) {
        withRun(id, respond: respond) { [unowned self] run in
            guard let store else { return respond(.success(TaskShowAnswer(run, stored: attemptLog.attempts(of: id)))) }
            let reply = LoopOwned(respond)
            let inbox = loop.inbox
            Task.detached {
                // The answer made here, off the loop: a large input is read from its text.
                let answer: Result<TaskShowAnswer, CommandError>
                let result = await Result { try await store.attempts(of: id) }
                switch result {
                case .success(var stored):
                    if let current = run.attemptRecord {
                        stored.removeAll { $0.number == current.number }
                        stored.append(current)
                    }
                    answer = .success(TaskShowAnswer(run, stored: stored))
                case .failure(let error):
                    answer = .failure(.unavailable("cannot read the attempts of run \(id) from the store: \(error)"))
                }
                inbox.post { reply.value(answer) }
            }
        }
    }
}

/// The attempts of the runs an agent without a store keeps in memory (unfinished and recently
/// finished ones), bounded per run as a store bounds them — but only the newest keeps its tails
/// (it shares them with the run's record): a thousand recent runs' ten tails each would be a
/// gigabyte.
package struct AttemptLog {
    private var byRun: [String: [TaskAttempt]] = [:]

    package init() {}

    /// Takes the run's attempt record (a new attempt, or the end of one).
    package mutating func note(_ run: TaskRun) {
        guard let record = run.attemptRecord else { return }
        var list = byRun[run.id, default: []]
        list.removeAll { $0.number >= record.number }
        list.append(record)
        if list.count > TaskAttempt.keptAttempts { list.remove(at: 1) }
        for index in list.indices.dropLast() where list[index].stderrTail != nil || list[index].stdoutTail != nil {
            list[index].stderrTail = nil
            list[index].stdoutTail = nil
        }
        byRun[run.id] = list
    }

    package mutating func forget(_ id: String) { byRun[id] = nil }

    package func attempts(of id: String) -> [TaskAttempt] { byRun[id] ?? [] }
}
