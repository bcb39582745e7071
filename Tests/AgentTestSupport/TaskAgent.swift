import Foundation

/// A real agent (`agent-control console`) with tasks and HTTP on a free port, and the task
/// commands against it over both fronts.
package enum TaskAgent {
    package static let token = "admin-token-0123456789abcdef"

    package static let tasks = #"""
        "later": {"type": "command", "command": ["/bin/true"], "description": "runs later",
                  "input": {"type": "object", "required": ["path"], "properties": {"path": {"type": "string"}, "count": {"type": "integer"}}}},
        "other": {"type": "command", "command": ["/bin/true"], "max_concurrent": 2}
        """#

    /// An agent with tasks and HTTP on a free port; its port.
    package static func agent(tasks: String = Self.tasks, store: String = "", modules: String = "[]", processes: String = "{}",
                      directory: String = TestPaths.temporaryDirectory("tasks"), environment: [String: String] = [:]) throws -> (AgentRun, Int) {
        let settings = #"""
            {"enabled_modules": \#(modules), "processes": \#(processes), \#(store)
             "http": {"listen": "127.0.0.1:0", "tokens": ["${env:AGENT_API_TOKEN}"]},
             "tasks": {\#(tasks)}}
            """#
        let run = try AgentRun(settings: settings, arguments: ["--no-build", "--json"], environment: environment.merging(["AGENT_API_TOKEN": token]) { $1 },
                               directory: directory)
        let line = run.waitForLine(onStderr: true) { $0.contains("http: listening on http://127.0.0.1:") }
        guard let port = line?.components(separatedBy: "http://127.0.0.1:").last.flatMap({ Int($0.prefix { $0.isNumber }) }) else {
            _ = run.stop()
            throw HTTPProbe.Failure(description: "the agent did not say where it listens:\n\(run.transcript)")
        }
        return (run, port)
    }

    package static func control(_ agent: AgentRun, _ arguments: [String]) throws -> ProgramResult {
        try runProgram("agent-control", ["task"] + arguments + ["--settings", agent.settingsFile], timeout: 120)
    }

    package static func http(_ method: String, _ path: String, port: Int, body: String? = nil) throws -> HTTPProbe.Answer {
        try HTTPProbe.request(method, path, port: port, token: token, body: body)
    }

    /// The `key: value` lines of `task show` / `task run --wait`.
    package static func fields(_ text: String) -> [String: String] {
        var fields: [String: String] = [:]
        for line in text.split(separator: "\n") {
            guard let colon = line.firstIndex(of: ":") else { continue }
            fields[String(line[..<colon])] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        return fields
    }
}
