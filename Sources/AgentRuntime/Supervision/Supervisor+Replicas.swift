import AgentBase
import AgentCommands
import AgentCore
import AgentSupervision
import JSONSchema

extension Supervisor {
    /// `process start|stop|restart NAME` for a process with `replicas`: the action on every
    /// replica (`NAME#2` names one). `start` starts the replicas that have no worker and is
    /// refused only when all of them have one. The answer lists each replica (`processes`).
    func replicaCommand(_ action: ProcessCommand.Action, group: ReplicaGroup) -> Result<ProcessCommand.Answer, CommandError> {
        guard !stopping else { return .failure(CommandError(.failed, "the agent is stopping")) }
        var members = group.members
        if action == .start {
            members = members.filter { !$0.hasWorker }
            guard !members.isEmpty else {
                return .failure(CommandError(.failed, "all \(group.members.count) replicas of \(group.name) are already running or starting; stop one first, or restart them"))
            }
        }
        for member in members {
            if case .failure(let refusal) = processCommand(action, name: member.name) { return .failure(refusal) }
        }
        return .success(ProcessCommand.Answer(processes: group.members.map(SupervisedProcessInfo.init)))
    }
}
