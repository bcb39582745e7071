#if Fleet
import AgentWork
import Foundation
import JSONSchema
import Logging
import PostgresNIO

/// One agent per `agent_id`: a copied settings.json gave two agents the same one, both joined,
/// and each led the schedules as that agent, so that every planned time fired twice. An agent
/// joins only while no other live agent holds its `agent_id`, and its heartbeats say when one
/// took the row since (two that started together).
extension PostgresFleetStore {
    /// Another agent that holds this store's `agent_id` and is alive (its heartbeat newer than
    /// three of its intervals), described; nil when there is none, or it is this agent's
    /// predecessor (this host, its process gone).
    func otherHolderOfTheAgentID() async throws -> String? {
        let rows = try await client.query("""
            SELECT host, \(unescaped: PostgresMigrations.now) - heartbeat, data FROM fleet_agents WHERE agent_id = \(settings.agentID)
            """, logger: clientLogger)
        for try await (host, silence, data) in rows.decode((String, Double, String).self) {
            let detail = (try? JSONValue.parse(Data(data.utf8))) ?? .object([:])
            guard detail["instance"]?.stringValue != instance else { return nil }
            let interval = detail["interval"]?.numberValue?.doubleValue ?? settings.heartbeat
            if silence > 3 * max(interval, 0) { return nil }
            if host == Self.hostName, let pid = detail["pid"]?.numberValue?.intValue.flatMap(pid_t.init(exactly:)),
               pid == getpid() || !Self.isRunning(pid) {
                return nil
            }
            return "another agent is in the fleet as agent_id \"\(settings.agentID)\" (host \(host.debugDescription), its last heartbeat \(String(format: "%.1f", silence)) s ago): give each agent an agent_id of its own; this agent joins once that one has been silent for three heartbeats"
        }
        return nil
    }

    /// The heartbeat's row detail: the member's, with this store's instance and process.
    func beatDetail(_ member: FleetMember) -> String {
        var object = member.detail.objectValue ?? [:]
        object["instance"] = .string(instance)
        object["pid"] = .number(JSONNumber(Int(getpid())))
        return JSONValue.object(object).serialized()
    }

    /// Whether process `pid` of this host runs (a zombie, killed and not yet reaped, does not).
    static func isRunning(_ pid: pid_t) -> Bool {
        guard pid > 0, kill(pid, 0) == 0 || errno == EPERM else { return false }
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return true }
        let state = stat[stat.index(after: close)...].drop { $0 == " " }.first
        return state != "Z" && state != "X"
    }

    /// This host's name, as the heartbeats give it.
    static var hostName: String {
        var name = [CChar](repeating: 0, count: 256)
        gethostname(&name, name.count)
        return String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
#endif
