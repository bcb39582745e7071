import Foundation

/// What a logic adapter can use while it answers: the agent's store (read-only SQL over the
/// event log) and the log.
public final class AdapterContext: Sendable {
    private let host: HostBridge

    init(host: HostBridge) { self.host = host }

    /// Runs a read-only SQL query over the store; `?` placeholders take `parameters` (strings,
    /// numbers, booleans). Rows are column → String, Int, Double or NSNull.
    public func query(_ sql: String, _ parameters: [any Sendable] = []) throws -> [[String: Any]] {
        let json = try host.query(sql: sql, parameters: parameters)
        guard let rows = try JSONSerialization.jsonObject(with: Data(json)) as? [[String: Any]] else {
            throw ProcessContextError("the host answered a query with something else than rows")
        }
        return rows
    }

    /// The newest stored event of `type`, if any.
    public func latestEvent(type: String) throws -> Event? {
        guard let row = try query("SELECT time, source, payload FROM events WHERE type = ? ORDER BY id DESC LIMIT 1", [type]).first
        else { return nil }
        return Event(type: type, source: row["source"] as? String ?? "",
                     time: Date(timeIntervalSince1970: row["time"] as? Double ?? 0),
                     payload: Array((row["payload"] as? String ?? "").utf8))
    }

    /// Emits an event (from the chatbot process), e.g. to trigger work elsewhere.
    public func emit(_ type: String, payload: some Encodable) throws {
        let bytes = Array(try JSONEncoder().encode(payload))
        guard !type.isEmpty, host.emit(type: type, payload: bytes) else {
            throw ProcessContextError("event \"\(type)\" was not accepted by the host")
        }
    }

    /// Writes a line to the agent's log, tagged with the chatbot's process name.
    public func log(_ text: String, level: MessageLevel = .info) { host.log(level: level, text: text) }
}
