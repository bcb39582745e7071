import AgentTestSupport
import Foundation
import JSONSchema
import Testing

/// A real agent for the resource tests (tasks, schedules, executors over the API): its
/// settings file written with formatting a serializer would not keep (tabs, no spaces in one
/// member, descriptions, a key order that is not sorted), an admin token (`ops`) and a read
/// token (`alice`).
struct ResourceAgent {
    let agent: WorkflowAgent
    var file: String { agent.run.settingsFile }
    var text: String { (try? String(contentsOfFile: file, encoding: .utf8)) ?? "" }
    var socket: String { agent.run.directory + "/.agent/run/control.sock" }

    static let backup = #"{"type": "command", "command": "echo '{\"v\": 1}'", "shell": true,   "description": "kept as written"}"#
    static let report = #"{"type":"command","command":["/bin/true"],"description":"no spaces here"}"#
    static let nightly = #"{"cron": "0 3 * * *", "run": {"task": "backup"}, "description": "names the task backup"}"#

    static let settings = """
    {
    \t"enabled_modules": [],
    \t"processes": {},
    \t"http":   {"listen": "127.0.0.1:0", "tokens": [{"token": "${env:OPS_TOKEN}", "name": "ops"}, {"token": "${env:ALICE_TOKEN}", "role": "read", "name": "alice"}]},
    \t"tasks": {
    \t\t"backup": \(backup),
    \t\t"report":\(report)
    \t},
    \t"schedules": {
    \t\t"nightly": \(nightly)
    \t}
    }

    """

    static func start(_ name: String) throws -> (ResourceAgent, directory: String) {
        let directory = TestPaths.temporaryDirectory(name)
        return (ResourceAgent(agent: try WorkflowAgent.start(settings, directory: directory)), directory)
    }

    func stop() { _ = agent.run.stop() }

    /// An HTTP request as `ops` (or `token`); the answer and its body as JSON.
    func http(_ method: String, _ path: String, _ body: JSONValue? = nil, token: String = WorkflowAgent.opsToken,
              headers: [String: String] = [:]) throws -> (status: Int, json: JSONValue, body: String) {
        let answer = try HTTPProbe.request(method, path, port: agent.port, token: token, body: body?.serialized(), headers: headers)
        return (answer.status, (try? JSONValue.parse(Data(answer.body.utf8))) ?? .null, answer.body)
    }

    /// One request on the control socket, as JSON.
    func control(_ request: JSONValue) throws -> JSONValue {
        let client = try #require(RawControlClient(path: socket))
        client.send(request.serialized())
        return try JSONValue.parse(try #require(client.readLine(timeout: 120)))
    }

    /// `agent-control ARGUMENTS --settings FILE`.
    func cli(_ arguments: [String]) throws -> ProgramResult {
        try runProgram("agent-control", arguments + ["--settings", file], timeout: 120)
    }

    /// The settings file's hash as the resource's get answers it.
    func hash(_ path: String) throws -> String {
        try #require(try http("GET", path).json["hash"]?.stringValue)
    }

    /// Runs task `name` over HTTP and waits for its end: the run.
    func run(_ name: String) throws -> JSONValue {
        try http("POST", "/api/tasks/\(name)/run", ["wait": true]).json["run"] ?? .null
    }

    /// Whether `new` is `old` with only the text between `before` and `after` (two pieces of
    /// `old`, `before` ending where the edited member's value starts) different: everything
    /// outside the member, byte for byte.
    static func onlyBetween(_ old: String, _ new: String, before: String, after: String) -> Bool {
        guard let start = old.range(of: before)?.upperBound, let end = old.range(of: after, range: start..<old.endIndex)?.lowerBound else { return false }
        return new.hasPrefix(old[..<start]) && new.hasSuffix(old[end...]) && new.utf8.count >= old[..<start].utf8.count + old[end...].utf8.count
    }

    /// The file's pointers of a refusal's errors.
    static func pointers(_ json: JSONValue) -> [String] {
        json["errors"]?.arrayValue?.compactMap { $0["pointer"]?.stringValue } ?? []
    }
}
