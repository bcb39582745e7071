import AgentTestSupport
import Foundation
import Testing

/// What the answers of a real agent hold, route by route of its own OpenAPI document: every
/// time is RFC 3339 text, a number the settings give as a number comes back as one, an
/// unknown conversation is not found.
@Suite(.ownThreads, .serialized) struct AnswerFieldFormTests {
    static let token = "answer-forms-token-0123456789abcdef"
    static let settings = #"""
    {"enabled_modules": ["sample"],
     "http": {"listen": "127.0.0.1:0", "tokens": ["${env:AGENT_API_TOKEN}"]},
     "processes": {"trades": {"type": "trade_feed", "pairs": ["X/Y"], "interval": 0.5},
                   "chat": {"type": "chatbot", "logic_adapters": ["features", "status"]},
                   "pool": {"type": "executor", "tasks": {"fail": {}}}},
     "tasks": {"job": {"type": "command", "command": ["/bin/true"]}, "fail": {"type": "command", "command": ["/bin/false"]}},
     "schedules": {"tick": {"every": 30, "run": {"task": "job"}}},
     "workflows": {"flow": {"steps": [{"id": "one", "task": "job"}]},
                   "flaky": {"steps": [{"id": "try", "task": "fail", "retries": {"max": 1, "initial_delay": 3600}}]}}}
    """#

    static func start() throws -> (AgentRun, String) {
        try AgentRun.listening(settings: settings, environment: ["AGENT_API_TOKEN": token])
    }

    static func get(_ base: String, _ path: String) throws -> CurlResponse {
        try curl("GET", base + path, headers: ["Authorization": "Bearer \(token)"])
    }

    static func post(_ base: String, _ path: String, _ body: String) throws -> CurlResponse {
        try curl("POST", base + path, headers: ["Authorization": "Bearer \(token)", "Content-Type": "application/json"], body: body)
    }

    /// `date-time` of RFC 3339: a date, `T`, a time with optional fractions, `Z` or an offset.
    static let rfc3339 = #"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$"#

    /// Whether a member of this name holds a time.
    static func namesATime(_ key: String) -> Bool {
        key.hasSuffix("_at") || key == "time" || key == "timestamp"
    }

    /// The members of `value` that name a time and hold anything but RFC 3339 text, at their
    /// JSON pointers.
    static func badTimes(in value: Any, at pointer: String = "") -> [String] {
        if let object = value as? [String: Any] {
            return object.keys.sorted().flatMap { key -> [String] in
                let member = object[key]!
                let here = pointer + "/" + key
                if namesATime(key), !(member is NSNull) {
                    guard let text = member as? String, text.range(of: rfc3339, options: .regularExpression) != nil else {
                        return ["\(here): \(member) (\(type(of: member)))"]
                    }
                }
                return badTimes(in: member, at: here)
            }
        }
        if let array = value as? [Any] { return array.enumerated().flatMap { badTimes(in: $1, at: pointer + "/\($0)") } }
        return []
    }

    @Test func everyTimeInEveryGETAnswerIsRFC3339() throws {
        let (agent, base) = try Self.start()
        defer { _ = agent.stop() }
        // Something in every list: a task run, a workflow run (and one whose step waits to retry),
        // a conversation, a memory key.
        let task = try Self.post(base, "/api/tasks/job/run", #"{"wait": true}"#)
        let taskRun = try #require((task.json?["run"] as? [String: Any])?["id"] as? String, "\(task.description)")
        let flow = try Self.post(base, "/api/workflows/flow/run", #"{"wait": true}"#)
        let flowRun = try #require((flow.json?["run"] as? [String: Any])?["id"] as? String, "\(flow.description)")
        #expect(HTTPAgent.eventually { (try? Self.post(base, "/api/chat", #"{"text": "status?"}"#))?.status == 200 })
        let flaky = try Self.post(base, "/api/workflows/flaky/run", "{}")
        let flakyRun = try #require((flaky.json?["run"] as? [String: Any])?["id"] as? String, "\(flaky.description)")
        #expect(HTTPAgent.eventually {
            let steps = (try? Self.get(base, "/api/workflow-runs/" + flakyRun))?.json?["steps"] as? [[String: Any]] ?? []
            return steps.contains { $0["retry_at"] != nil }
        }, "the step of \(flakyRun) never waited to retry")
        _ = try curl("PUT", base + "/api/memory/entry", headers: ["Authorization": "Bearer \(Self.token)"], body: #"{"key": "note", "value": 1}"#)

        // Path parameters and required query members by name (and the path they are in).
        func value(_ name: String, in path: String) -> String? {
            switch name {
            case "conversation": "default"
            case "user": "alice"
            case "id": path.hasPrefix("/api/workflow-runs/") ? flowRun : taskRun
            case "key": "note"
            case "name" where path.hasPrefix("/api/processes/"): "trades"
            case "name" where path.hasPrefix("/api/schedules/"): "tick"
            case "name" where path.hasPrefix("/api/workflows/"): "flow"
            case "name" where path.hasPrefix("/api/tasks/"): "job"
            case "name" where path.hasPrefix("/api/executors/"): "pool"
            default: nil
            }
        }
        let document = try #require(try Self.get(base, "/api/openapi.json").json)
        let paths = try #require(document["paths"] as? [String: [String: Any]])
        var walked: [String] = []
        var problems: [String] = []
        let routes: [(path: String, operations: [String: Any])] = paths.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
            + [("/api/workflow-runs/" + flakyRun, ["get": [String: Any]()])]
        for (path, operations) in routes {
            // The document itself is schemas (its `started_at` are definitions), not an answer.
            guard let get = operations["get"] as? [String: Any], path != "/api/openapi.json" else { continue }
            var target = path
            var query: [String] = []
            for parameter in get["parameters"] as? [[String: Any]] ?? [] {
                guard let name = parameter["name"] as? String else { continue }
                if parameter["in"] as? String == "path" {
                    guard let filled = value(name, in: path) else { problems.append("\(path): no value for {\(name)}"); continue }
                    target = target.replacingOccurrences(of: "{\(name)}", with: filled)
                } else if parameter["required"] as? Bool == true, let filled = value(name, in: path) {
                    query.append("\(name)=\(filled)")
                }
            }
            let answer = try Self.get(base, target + (query.isEmpty ? "" : "?" + query.joined(separator: "&")))
            guard answer.status == 200, let json = try? JSONSerialization.jsonObject(with: Data(answer.body.utf8)) else { continue }
            walked.append(target)
            problems += Self.badTimes(in: json).map { "GET \(target): \($0)" }
        }
        #expect(walked.count >= 20, "answered: \(walked)")
        #expect(walked.contains("/api/chat/default") && walked.contains("/api/runs/" + taskRun), "\(walked)")
        #expect(problems.isEmpty, "\(problems.joined(separator: "\n"))")
    }

    @Test func aNumberTheSettingsGiveComesBackAsANumber() throws {
        let (agent, base) = try Self.start()
        defer { _ = agent.stop() }
        let schedules = try Self.get(base, "/api/schedules").json?["schedules"] as? [[String: Any]] ?? []
        let tick = try #require(schedules.first { $0["name"] as? String == "tick" }, "\(schedules)")
        #expect(tick["every"] as? NSNumber == 30 && !(tick["every"] is String), "\(tick)")
        let shown = try runProgram("agent-control", ["schedule", "list", "--settings", agent.settingsFile])
        #expect(shown.stdout.contains("every 30 s"), "\(shown.stdout)\(shown.stderr)")
    }

    @Test func anUnknownConversationIsNotFoundAndTheDefaultOneAlwaysIs() throws {
        let (agent, base) = try Self.start()
        defer { _ = agent.stop() }
        let unknown = try Self.get(base, "/api/chat/nosuch")
        #expect(unknown.status == 404 && unknown.json?["code"] as? String == "not_found", "\(unknown.description)")
        #expect(unknown.json?["error"] as? String ?? "" == #"no conversation "nosuch": nothing was said in it yet (or its history was cleared); a message to it starts it"#)
        let empty = try Self.get(base, "/api/chat/default")
        #expect(empty.status == 200 && (empty.json?["lines"] as? [Any])?.isEmpty == true, "\(empty.description)")
        // Once something is said in it, it is known.
        #expect(HTTPAgent.eventually { (try? Self.post(base, "/api/chat", #"{"text": "status?", "conversation": "ops"}"#))?.status == 200 })
        let ops = try Self.get(base, "/api/chat/ops")
        #expect(ops.status == 200 && (ops.json?["lines"] as? [Any])?.count == 2, "\(ops.description)")
    }
}
