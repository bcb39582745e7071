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
                    return .failure(.invalid("/since: expected \(TimeSince.form); found \(since.json.serialized())", pointer: "/since"))
                }
                request.since = Int64(saturating: seconds * 1e9)
            }
            return .success(request)
        }
    }

}
