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

        /// Reads a request; an invalid one is an error answer (`"code": "invalid"`, with the
        /// pointer of the field at fault).
        public static func parse(_ request: JSONValue, now: Double = Date().timeIntervalSince1970) -> Result<Request, AnswerError> {
            guard let value = request["name"] else { return .failure(AnswerError("a logs request needs \"name\" (a process name)", pointer: "/name")) }
            guard let name = value.stringValue else {
                return .failure(AnswerError("\"name\" must be a string; found \(Describe.article(value)) (\(value.serialized()))", pointer: "/name"))
            }
            var parsed = Request(name: name)
            for key in ["lines", "after"] {
                guard let value = request[key], value != .null else { continue }
                guard let number = value.numberValue?.intValue, number >= 0 else {
                    return .failure(AnswerError("\"\(key)\" must be an integer ≥ 0; found \(value.serialized())", pointer: "/\(key)"))
                }
                if key == "lines" { parsed.lines = number } else { parsed.after = number }
            }
            if let value = request["since"], value != .null {
                let seconds: Double?
                if let number = value.numberValue?.doubleValue, number >= 0 {
                    seconds = now - number
                } else if let text = value.stringValue {
                    // A query string (`?since=600`) carries seconds as text.
                    if let number = Double(text), number >= 0, number.isFinite { seconds = now - number } else { seconds = TimeSpec.since(text, now: now) }
                } else {
                    seconds = nil
                }
                guard let seconds else {
                    return .failure(AnswerError("\"since\" must be seconds back from now (a number ≥ 0), a duration like 30s, 10m, 2h, 1d, or an ISO 8601 time; found \(value.serialized())",
                                                pointer: "/since"))
                }
                parsed.since = Int64(saturating: seconds * 1e9)
            }
            return .success(parsed)
        }
    }

    /// A request the command cannot answer: `{"ok": false, "code", "error", "pointer"}`.
    public struct AnswerError: Error, Sendable, Equatable {
        public var code: String
        public var message: String
        public var pointer: String?

        public init(_ message: String, code: String = "invalid", pointer: String? = nil) {
            self.code = code
            self.message = message
            self.pointer = pointer
        }

        public var json: JSONValue {
            var object: JSONObject = ["ok": false, "code": .string(code), "error": .string(message)]
            if let pointer { object["pointer"] = .string(pointer) }
            return .object(object)
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
