import AgentCore
import AgentSupervision
import JSONSchema

extension Supervisor {
    /// `process start|stop|restart NAME` for a process with `replicas`: the action on every
    /// replica (`NAME#2` names one). `start` starts the replicas that have no worker and is
    /// refused only when all of them have one. The answer lists each replica (`processes`).
    func replicaCommand(_ action: String, group: ReplicaGroup) -> JSONValue {
        guard ["start", "stop", "restart"].contains(action) else {
            return ["ok": false, "error": .string("unknown process action \"\(action)\"; known: start, stop, restart")]
        }
        guard !stopping else { return ["ok": false, "error": "the agent is stopping"] }
        var members = group.members
        if action == "start" {
            members = members.filter { !$0.hasWorker }
            guard !members.isEmpty else {
                return ["ok": false, "error": .string("all \(group.members.count) replicas of \(group.name) are already running or starting; stop one first, or restart them")]
            }
        }
        for member in members {
            let answer = processCommand(action, name: member.name)
            if answer["ok"] != true { return answer }
        }
        return ["ok": true, "processes": .array(group.members.map { snapshot(of: $0) })]
    }
}
