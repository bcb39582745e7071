import AgentBase
import AgentSupervision
import JSONSchema

/// `logs`: a process's recent log (see ``ProcessLog``).
package enum LogsCommand: AgentCommand {
    package typealias Host = any SupervisionCommandHost
    package struct Request: Codable, Sendable, Equatable {
        package var name: String
        package var lines: Int?
        package var since: TimeSince?
        package var after: Int?

        package init(name: String, lines: Int? = nil, since: TimeSince? = nil, after: Int? = nil) {
            self.name = name
            self.lines = lines
            self.since = since
            self.after = after
        }
    }

    /// A page of the log: its lines, oldest first, and where the next page starts.
    package struct Answer: Encodable, Sendable, Equatable {
        package let ok = true
        package var lines: [Line]
        /// Pass as `after` to get only the lines that come after these.
        package var next: Int

        package init(lines: [Line], next: Int) {
            self.lines = lines
            self.next = next
        }

        /// A process's page.
        package init(_ page: ProcessLog.Page) {
            self.init(lines: page.lines.map { Line($0) }, next: page.next)
        }
    }

    /// One line: `{"seq", "time", "stream", "text"}`, the time in ISO 8601 (UTC, milliseconds).
    package struct Line: Encodable, Sendable, Equatable {
        package var seq: Int
        package var time: String
        package var stream: String
        package var text: String
        /// The replica the line is about, when the name is a process with replicas.
        package var process: String?

        package init(seq: Int, time: String, stream: String, text: String, process: String? = nil) {
            self.seq = seq
            self.time = time
            self.stream = stream
            self.text = text
            self.process = process
        }

        package init(_ line: ProcessLog.Line, process: String? = nil) {
            self.init(seq: line.seq, time: ConsoleOutput.timestamp(nanoseconds: line.time, full: true), stream: line.stream.rawValue,
                      text: line.text, process: process)
        }
    }

    package static let name = "logs"
    package static let summary = "A process's recent log: what its workers wrote on stdout and stderr and the agent's lines about it (the last 2,000 lines or 512 KiB); follow with `after`."
    package static let routes: [CommandRoute] = [.get("/api/processes/{name}/logs")]
    package static let mutating = false
    package static let requestSchema: JSONValue = CommandSchema.object([
        "name": SupervisionCommands.processName,
        "lines": ["type": "integer", "minimum": 0, "description": "At most this many lines: the newest, or with `after` the oldest after it."],
        "since": ["type": ["string", "number"], "minimum": 0, "maximum": .number(JSONNumber(Int(SettingsBounds.longestRetention))),
                  "description": "Only lines since then: seconds back from now (at most 100 years), a duration (30s, 10m, 2h, 1d) or an ISO 8601 time."],
        "after": ["type": "integer", "minimum": 0, "description": "Only lines with a greater sequence number (paging, following: the `next` of the previous answer)."],
    ], required: ["name"])
    package static let answerSchema: JSONValue = CommandSchema.object([
        "ok": ["const": true],
        "lines": ["type": "array", "items": CommandSchema.object([
            "seq": ["type": "integer", "description": "Grows through the agent's run, over every process."],
            "time": ["type": "string", "format": "date-time"],
            "stream": ["type": "string", "enum": ["stdout", "stderr", "supervisor"]],
            "text": ["type": "string"],
            "process": ["type": "string", "description": "The replica the line is about, when the name is a process with replicas."],
        ], required: ["seq", "time", "stream", "text"])],
        "next": ["type": "integer", "description": "Pass as `after` to get only the lines that come after these."],
    ], required: ["ok", "lines", "next"])
    package static var examples: [(request: JSONValue, answer: Answer)] {
        [(["name": "fetcher", "lines": 10, "since": "10m"],
          Answer(lines: [Line(seq: 7, time: "2026-11-24T07:00:00Z", stream: "stdout", text: "fetched 3 items", process: "fetcher#2")], next: 7)),
         (["name": "fetcher", "since": 600, "after": 7], Answer(lines: [], next: 7))]
    }

    package static func run(_ request: Request, on host: any SupervisionCommandHost, caller: CommandCaller,
                            respond: @escaping (Result<Answer, CommandError>) -> Void) {
        switch ProcessLog.Request.make(name: request.name, lines: request.lines, since: request.since, after: request.after) {
        case .success(let parsed): respond(host.logs(parsed))
        case .failure(let refusal): respond(.failure(refusal))
        }
    }
}
