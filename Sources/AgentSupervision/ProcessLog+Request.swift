import AgentBase
import AgentCore
import Foundation
import JSONSchema

extension ProcessLog {
    /// What a `logs` request asks for: `{"command": "logs", "name": NAME, "lines": N,
    /// "since": SECONDS_OR_TIME, "after": SEQ}`.
    public struct Request: Sendable, Equatable {
        public var name: String
        /// At most this many lines (nil: every line kept).
        public var lines: Int?
        /// Only lines at or after this time (nanoseconds since 1970).
        public var since: Int64?
        /// Only lines with a greater sequence number (following, paging).
        public var after: Int?

        /// The request of a decoded `logs` command (the registry checked the members' types
        /// and bounds); a `since` that names no time is refused at `/since`.
        public static func make(name: String, lines: Int?, since: TimeSince?, after: Int?,
                                now: Double = Date().timeIntervalSince1970) -> Result<Request, CommandError> {
            var request = Request(name: name, lines: lines, after: after)
            if let since {
                guard let seconds = since.time(now: now) else {
                    return .failure(.invalid("/since: expected seconds back from now (a number ≥ 0), a duration like 30s, 10m, 2h, 1d, or an ISO 8601 time; found \(since.json.serialized())",
                                             pointer: "/since"))
                }
                request.since = Int64(saturating: seconds * 1e9)
            }
            return .success(request)
        }
    }

    /// The answer for a process with replicas: their lines interleaved in the order they came,
    /// each with `"process"`, the replica's name. Nil when none of them has a log.
    public func answer(_ request: Request, replicas: [String]) -> JSONValue? {
        guard let page = read(replicas, after: request.after, since: request.since, limit: request.lines) else { return nil }
        let lines: [JSONValue] = page.lines.map { entry in
            var object = entry.line.json.objectValue ?? [:]
            object["process"] = .string(entry.name)
            return .object(object)
        }
        return ["ok": true, "lines": .array(lines), "next": .number(JSONNumber(page.next))]
    }

    /// The answer to a parsed request: `{"ok": true, "lines": […], "next": SEQ}`, or nil when
    /// the process has no log.
    public func answer(_ request: Request) -> JSONValue? {
        guard let page = read(request.name, after: request.after, since: request.since, limit: request.lines) else { return nil }
        return ["ok": true, "lines": .array(page.lines.map(\.json)), "next": .number(JSONNumber(page.next))]
    }
}
