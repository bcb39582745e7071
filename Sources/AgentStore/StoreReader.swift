import AgentBase
import AgentCore
import Foundation
import GRDB
import JSONSchema

/// Reads a store from outside the agent (agent-control events / history): a read-only
/// connection, which WAL mode lets run beside the agent's writer.
public struct StoreReader {
    package let database: DatabaseQueue
    public let path: String

    public init(path: String) throws(ControlError) {
        guard FileManager.default.fileExists(atPath: path) else {
            throw ControlError("no store at \(path): the agent has not run with the store yet (or \"store\" points elsewhere)")
        }
        do {
            database = try AgentStore.readOnlyQueue(path: path)
        } catch {
            throw ControlError("cannot open the store \(path): \(error)")
        }
        self.path = path
    }

    /// One stored event.
    public struct StoredEvent: Sendable {
        public var id: Int64
        public var time: Double
        public var type: String
        public var source: String
        public var payload: String

        public var json: JSONValue {
            let payloadValue = (try? JSONValue.parse(payload)) ?? .string(payload)
            return ["id": .number(JSONNumber(Int(id))), "time": .string(Self.iso(time)), "type": .string(type),
                    "source": .string(source), "payload": payloadValue]
        }

        public var line: String { "\(Self.iso(time))  \(source) → \(type)  \(payload)" }

        package static func iso(_ seconds: Double) -> String {
            ConsoleOutput.timestamp(seconds: seconds, full: true)
        }
    }

    /// Events after `afterID`, filtered, oldest first (the newest `limit` when `newest`).
    /// `runs`: only events about one of these runs (their payload's `run_id`: a task run's or a
    /// workflow run's), found by their index, as `sources` and `types` are.
    /// `maxBytes`: the read stops once the events' payloads, types and sources come to this
    /// many bytes (the first event is always read: a page moves on), for an answer of bounded
    /// size (``ListAnswerSize``); `truncated` says whether it stopped early.
    public func events(types: [String], sources: [String] = [], runs: [String] = [], since: Double?, afterID: Int64 = 0, limit: Int,
                       newest: Bool) throws -> [StoredEvent] {
        try events(types: types, sources: sources, runs: runs, since: since, afterID: afterID, limit: limit, newest: newest, maxBytes: .max).events
    }

    /// ``events(types:sources:runs:since:afterID:limit:newest:)`` within `maxBytes`.
    public func events(types: [String], sources: [String] = [], runs: [String] = [], since: Double?, afterID: Int64 = 0, limit: Int,
                       newest: Bool, maxBytes: Int) throws -> (events: [StoredEvent], truncated: Bool) {
        var conditions = ["id > ?"]
        var arguments: [any DatabaseValueConvertible] = [afterID]
        if !runs.isEmpty {
            conditions.append("run_id IN (\(runs.map { _ in "?" }.joined(separator: ", ")))")
            arguments += runs.map { $0 as any DatabaseValueConvertible }
        }
        if !types.isEmpty {
            conditions.append("type IN (\(types.map { _ in "?" }.joined(separator: ", ")))")
            arguments += types.map { $0 as any DatabaseValueConvertible }
        }
        if !sources.isEmpty {
            conditions.append(Self.matchingNames("source", sources, &arguments))
        }
        if let since {
            conditions.append("time >= ?")
            arguments.append(since)
        }
        let order = newest ? "DESC" : "ASC"
        let sql = "SELECT id, time, type, source, payload FROM events WHERE \(conditions.joined(separator: " AND ")) ORDER BY id \(order) LIMIT \(limit)"
        let (events, truncated) = try database.read { db -> ([StoredEvent], Bool) in
            var events: [StoredEvent] = []
            var bytes = 0
            let rows = try Row.fetchCursor(db, sql: sql, arguments: StatementArguments(arguments))
            while let row = try rows.next() {
                let event = StoredEvent(id: row["id"], time: row["time"], type: row["type"], source: row["source"], payload: row["payload"])
                // The members' names, the id and the time: about 80 bytes besides.
                bytes += event.payload.utf8.count + event.type.utf8.count + event.source.utf8.count + 80
                if bytes > maxBytes, !events.isEmpty { return (events, true) }
                events.append(event)
            }
            return (events, false)
        }
        return (newest ? events.reversed() : events, truncated)
    }

    /// `column` is one of `names`, or a replica of one (`NAME#N`: a process with `replicas`
    /// names its replicas' events and history). A range rather than LIKE: `_` is a wildcard
    /// there, and a plain name may hold one; `$` follows `#` in byte order, and the index serves.
    package static func matchingNames(_ column: String, _ names: [String], _ arguments: inout [any DatabaseValueConvertible]) -> String {
        var alternatives: [String] = []
        for name in names {
            alternatives.append("\(column) = ?")
            arguments.append(name)
            guard !name.contains("#") else { continue }
            alternatives.append("(\(column) >= ? AND \(column) < ?)")
            arguments += [name + "#", name + "$"]
        }
        return "(" + alternatives.joined(separator: " OR ") + ")"
    }

    /// The run history, optionally of one process (and its replicas), newest last.
    public func history(process: String?, limit: Int) throws -> [HistoryEntry] {
        var values: [any DatabaseValueConvertible] = []
        let filter = process.map { "WHERE " + Self.matchingNames("process", [$0], &values) } ?? ""
        let arguments: StatementArguments = StatementArguments(values)
        return try database.read { db in
            try Row.fetchAll(db, sql: "SELECT * FROM (SELECT * FROM history \(filter) ORDER BY id DESC LIMIT \(limit)) ORDER BY id", arguments: arguments).map { row in
                let pid: Int? = row["pid"]
                let code: Int? = row["exit_code"]
                return HistoryEntry(time: row["time"], process: row["process"], event: row["event"], detail: row["detail"],
                                    // An edited store may hold anything: a value beyond Int32 is shown as unknown.
                                    pid: pid.flatMap(Int32.init(exactly:)), exitCode: code.flatMap(Int32.init(exactly:)), signal: row["signal"])
            }
        }
    }

    /// `PRAGMA integrity_check`: "ok" when the database is intact.
    public func integrityCheck() throws -> String {
        try database.read { db in try String.fetchAll(db, sql: "PRAGMA integrity_check").joined(separator: "; ") }
    }
}
