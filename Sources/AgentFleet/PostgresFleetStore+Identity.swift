#if Fleet
import AgentSupervision
import AgentWork
import Foundation
import JSONSchema
import Logging
import PostgresNIO

/// One agent per `agent_id`: a copied settings.json gave two agents the same one, both joined,
/// and each led the schedules as that agent, so that every planned time fired twice. Joining
/// takes the `fleet_agents` row in one statement — a new one, or one this agent may replace
/// (its silence past three of its intervals, or its predecessor's on this machine whose process
/// is gone), compared with the version read — so that of two agents joining at once one gets
/// it; and each heartbeat writes the row only while it is still this agent's.
extension PostgresFleetStore {
    /// The row of this store's `agent_id` as the join reads it.
    struct AgentRow {
        var host: String
        var heartbeat: Double
        var silence: Double
        var detail: JSONValue
    }

    /// Takes this store's `agent_id` for it; nil when it has, else why not (another live agent
    /// holds it, or took it at the same moment).
    func takeTheAgentID() async throws -> String? {
        let row = try await agentRow()
        if let row, let holder = liveHolder(row) { return holder }
        // Written only if the row is still the one judged (its heartbeat as read), or there was none.
        let replaces = row != nil, judged = row?.heartbeat ?? 0
        let rows = try await client.query("""
            INSERT INTO fleet_agents (agent_id, host, version, started, heartbeat, data)
            VALUES (\(settings.agentID), \(TaskNotifier.currentHostName()), '', 0, \(unescaped: PostgresMigrations.now), \(joinDetail()))
            ON CONFLICT (agent_id) DO UPDATE SET host = EXCLUDED.host, heartbeat = EXCLUDED.heartbeat, data = EXCLUDED.data
                WHERE \(replaces) AND fleet_agents.heartbeat = \(judged)
            RETURNING agent_id
            """, logger: clientLogger)
        for try await _ in rows.decode(String.self) { return nil }
        return "another agent joined the fleet as agent_id \"\(settings.agentID)\" at the same moment: give each agent an agent_id of its own; this agent joins once that one has been silent for three heartbeats"
    }

    private func agentRow() async throws -> AgentRow? {
        let rows = try await client.query("""
            SELECT host, heartbeat, \(unescaped: PostgresMigrations.now) - heartbeat,
                CASE WHEN octet_length(data) <= \(Self.largestMemberDetail) THEN data ELSE '{}' END
            FROM fleet_agents WHERE agent_id = \(settings.agentID)
            """, logger: clientLogger)
        for try await (host, heartbeat, silence, data) in rows.decode((String, Double, Double, String).self) {
            return AgentRow(host: host, heartbeat: heartbeat, silence: silence, detail: (try? JSONValue.parse(Data(data.utf8))) ?? .object([:]))
        }
        return nil
    }

    /// Why `row` keeps this agent out (a live agent holds it), or nil.
    func liveHolder(_ row: AgentRow) -> String? {
        // This store's own (a join whose answer came after its deadline).
        if row.detail["instance"]?.stringValue == instance { return nil }
        // The interval as the row says, within the settings' own bounds; a heartbeat ahead of
        // the server's clock was written by other hands (the server writes them).
        let interval = min(max(row.detail["interval"]?.numberValue?.doubleValue ?? settings.heartbeat, 0.1), 3600)
        if row.silence > 3 * interval || row.silence < -60 { return nil }
        if isPredecessor(row.detail) { return nil }
        return "another agent is in the fleet as agent_id \"\(settings.agentID)\" (host \(String(row.host.prefix(200)).debugDescription), its last heartbeat \(String(format: "%.1f", row.silence)) s ago): give each agent an agent_id of its own; this agent joins once that one has been silent for three heartbeats"
    }

    /// Whether the row was written by an earlier process of this machine and pid namespace that
    /// has ended (its pid gone, or another process's now).
    func isPredecessor(_ detail: JSONValue) -> Bool {
        let me = ProcessIdentity.current
        guard let boot = detail["boot_id"]?.stringValue, boot == me.boot, let namespace = detail["pid_ns"]?.stringValue, namespace == me.namespace,
              let pid = detail["pid"]?.numberValue?.intValue.flatMap(pid_t.init(exactly:)),
              let started = detail["start_time"]?.stringValue else { return false }
        return ProcessIdentity.hasEnded(pid, startedAt: started)
    }

    /// What the join writes in the row: this store's instance and process.
    private func joinDetail() -> String {
        var object = ProcessIdentity.current.json
        object["instance"] = .string(instance)
        object["interval"] = .number(JSONNumber(settings.heartbeat))
        return JSONValue.object(object).serialized()
    }

    /// The heartbeat's row detail: the member's, with this store's instance and process.
    func beatDetail(_ member: FleetMember) -> String {
        var object = member.detail.objectValue ?? [:]
        for (key, value) in ProcessIdentity.current.json { object[key] = value }
        object["instance"] = .string(instance)
        return JSONValue.object(object).serialized()
    }
}

/// A process told from every other: its machine's boot, its pid namespace, its pid and the
/// moment it started (a pid is reused, and the same in every container of one machine).
struct ProcessIdentity: Sendable {
    var boot: String
    var namespace: String
    var pid: pid_t
    var startTime: String

    static let current: ProcessIdentity = {
        let pid = getpid()
        return ProcessIdentity(boot: (try? String(contentsOfFile: "/proc/sys/kernel/random/boot_id", encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines) ?? "",
                               namespace: link("/proc/self/ns/pid"), pid: pid, startTime: ProcStat.read(pid).map { String($0.startTime) } ?? "")
    }()

    var json: JSONObject {
        ["boot_id": .string(boot), "pid_ns": .string(namespace), "pid": .number(JSONNumber(Int(pid))), "start_time": .string(startTime)]
    }

    /// Whether process `pid`, started at `startedAt`, has ended: gone, a zombie (killed a moment
    /// ago, not reaped yet), or its pid another process's. One whose /proc entry cannot be read
    /// (`hidepid`) but that exists is taken for alive.
    static func hasEnded(_ pid: pid_t, startedAt: String) -> Bool {
        guard pid > 0 else { return true }
        guard let stat = ProcStat.read(pid) else { return kill(pid, 0) != 0 && errno == ESRCH }
        return stat.state == "Z" || stat.state == "X" || String(stat.startTime) != startedAt
    }

    private static func link(_ path: String) -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        let count = readlink(path, &buffer, buffer.count - 1)
        return count > 0 ? String(decoding: buffer.prefix(count).map { UInt8(bitPattern: $0) }, as: UTF8.self) : ""
    }
}
#endif
