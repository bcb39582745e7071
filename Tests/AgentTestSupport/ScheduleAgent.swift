import Foundation
import JSONSchema
import Testing

/// A real agent (`agent-control console`) with tasks and schedules, its HTTP front on a free
/// port, and the CLI's schedule commands against it.
package struct ScheduleAgent {
    package let run: AgentRun
    package let port: Int

    package static let token = "admin-token-0123456789abcdef"

    package static func settings(tasks: String, schedules: String) -> String {
        #"""
        {"enabled_modules": [], "processes": {},
         "http": {"listen": "127.0.0.1:0", "tokens": ["${env:AGENT_API_TOKEN}"]},
         "tasks": {\#(tasks)},
         "schedules": {\#(schedules)}}
        """#
    }

    /// Starts the agent in `directory` (its settings written there, unless `settings` is nil:
    /// the file already there is used).
    package static func start(_ settings: String?, directory: String) throws -> ScheduleAgent {
        let text = try settings ?? String(contentsOfFile: directory + "/settings.json", encoding: .utf8)
        let run = try AgentRun(settings: text, arguments: ["--no-build", "--json"], environment: ["AGENT_API_TOKEN": token], directory: directory)
        let line = run.waitForLine(onStderr: true) { $0.contains("http: listening on http://127.0.0.1:") }
        guard let port = line?.components(separatedBy: "http://127.0.0.1:").last.flatMap({ Int($0.prefix { $0.isNumber }) }) else {
            _ = run.stop()
            throw HTTPProbe.Failure(description: "the agent did not start:\n\(run.transcript)")
        }
        return ScheduleAgent(run: run, port: port)
    }

    /// `agent-control schedule ARGUMENTS --settings …`.
    package func control(_ arguments: [String]) throws -> ProgramResult {
        try runProgram("agent-control", ["schedule"] + arguments + ["--settings", run.settingsFile], timeout: 120)
    }

    /// `schedule list --json`, by name.
    package func list() throws -> [String: JSONValue] {
        let result = try control(["list", "--json"])
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        var schedules: [String: JSONValue] = [:]
        for line in result.stdout.split(separator: "\n") {
            let value = try JSONValue.parse(Data(line.utf8))
            schedules[value["name"]?.stringValue ?? "?"] = value
        }
        return schedules
    }

    /// `schedule history NAME --json`, newest first.
    package func history(_ name: String, limit: Int = 1000) throws -> [JSONValue] {
        let result = try control(["history", name, "--json", "--limit", String(limit)])
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        return try result.stdout.split(separator: "\n").map { try JSONValue.parse(Data($0.utf8)) }
    }

    package func http(_ method: String, _ path: String, body: String? = nil) throws -> HTTPProbe.Answer {
        try HTTPProbe.request(method, path, port: port, token: Self.token, body: body)
    }

    /// Waits until `condition` holds (checked every 0.1 s, at most `timeout` s): a wait for
    /// something to happen, not a measure of how fast it does.
    @discardableResult
    package static func wait(timeout: Double = 30, _ condition: () throws -> Bool) rethrows -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if try condition() { return true }
            Thread.sleep(forTimeInterval: 0.1)
        }
        return try condition()
    }

    /// The lines of a file the test's commands append to.
    package static func lines(_ path: String) -> [String] {
        ((try? String(contentsOfFile: path, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
    }
}
