import AgentLoop

/// The replicas of one process (`"replicas": N`): `NAME#1 … NAME#N`, each a supervised process
/// of its own. Routing hands each event for the process to one of them (see ``pick(bytes:)``),
/// and commands given the process's name apply to all of them.
@LoopActor
package final class ReplicaGroup {
    /// The process's name in the settings.
    package let name: String
    /// Its replicas, by number.
    package private(set) var members: [SupervisedProcess] = []
    /// Where the next pick starts.
    private var cursor = 0

    package init(name: String) { self.name = name }

    package func add(_ replica: SupervisedProcess) {
        members.append(replica)
        members.sort { $0.planned.replica < $1.planned.replica }
    }

    /// The replica the next event goes to: round robin over the running replicas with room
    /// for `bytes` more in their queue; when none has, the next one that takes deliveries at
    /// all (starting, or waiting to restart: its successor gets them), whose `when_full` then
    /// applies. Nil when no replica takes deliveries (all stopped or failed): the event is not
    /// delivered to this process, as for a stopped process without replicas.
    package func pick(bytes: Int) -> SupervisedProcess? {
        let count = members.count
        var fallback = -1
        for step in 0..<count {
            let index = (cursor + step) % count
            let member = members[index]
            guard member.acceptsDeliveries else { continue }
            if member.state == .running, member.pendingBytes + bytes <= member.queueLimit {
                cursor = (index + 1) % count
                return member
            }
            if fallback < 0 { fallback = index }
        }
        guard fallback >= 0 else { return nil }
        cursor = (fallback + 1) % count
        return members[fallback]
    }
}
