import Foundation
import JSONSchema
import Testing

/// A real agent (`agent-control console`) with command tasks and workflows, its HTTP front on
/// a free port (tokens named `ops` and `alice`), and the CLI's workflow commands against it.
package struct WorkflowAgent {
    package let run: AgentRun
    package let port: Int

    package static let opsToken = "ops-token-0123456789abcdef"
    package static let aliceToken = "alice-token-0123456789abcdef"

    package static func settings(tasks: String, workflows: String, processes: String = "", schedules: String = "") -> String {
        #"""
        {"enabled_modules": [], "processes": {\#(processes)},
         "http": {"listen": "127.0.0.1:0", "tokens": [{"token": "${env:OPS_TOKEN}", "name": "ops"}, {"token": "${env:ALICE_TOKEN}", "name": "alice"}]},
         "tasks": {\#(tasks)},
         "workflows": {\#(workflows)},
         "schedules": {\#(schedules)}}
        """#
    }

    /// Starts the agent in `directory` (its settings written there, unless nil: the file there is used).
    /// `environment`: more variables for the agent (tokens of its own settings).
    package static func start(_ settings: String?, directory: String, environment: [String: String] = [:]) throws -> WorkflowAgent {
        let text = try settings ?? String(contentsOfFile: directory + "/settings.json", encoding: .utf8)
        let run = try AgentRun(settings: text, arguments: ["--no-build", "--json"],
                               environment: ["OPS_TOKEN": opsToken, "ALICE_TOKEN": aliceToken].merging(environment) { _, given in given },
                               directory: directory)
        let line = run.waitForLine(onStderr: true) { $0.contains("http: listening on http://127.0.0.1:") }
        guard let port = line?.components(separatedBy: "http://127.0.0.1:").last.flatMap({ Int($0.prefix { $0.isNumber }) }) else {
            _ = run.stop()
            throw HTTPProbe.Failure(description: "the agent did not start:\n\(run.transcript)")
        }
        return WorkflowAgent(run: run, port: port)
    }

    /// `agent-control workflow ARGUMENTS --settings …`.
    package func control(_ arguments: [String]) throws -> ProgramResult {
        try runProgram("agent-control", ["workflow"] + arguments + ["--settings", run.settingsFile], timeout: 120)
    }

    /// `workflow run NAME --input JSON --wait --json`: the run and its steps by id.
    package func runAndWait(_ name: String, input: String = "{}") throws -> (run: JSONValue, steps: [String: JSONValue], status: Int32) {
        let result = try control(["run", name, "--input", input, "--wait", "--json"])
        let answer = try JSONValue.parse(Data(result.stdout.utf8))
        return (answer["run"] ?? .null, Self.byStep(answer["steps"]), result.status)
    }

    /// `workflow run NAME` without waiting: the run's id.
    package func start(_ name: String, input: String = "{}") throws -> String {
        let result = try control(["run", name, "--input", input])
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        return result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// `workflow show RUN --json`.
    package func show(_ id: String) throws -> (run: JSONValue, steps: [String: JSONValue]) {
        let result = try control(["show", id, "--json"])
        let answer = try JSONValue.parse(Data(result.stdout.utf8))
        return (answer["run"] ?? .null, Self.byStep(answer["steps"]))
    }

    /// The steps of the current generation by id (the last record of each).
    package static func byStep(_ steps: JSONValue?) -> [String: JSONValue] {
        var result: [String: JSONValue] = [:]
        for step in steps?.arrayValue ?? [] { result[step["step"]?.stringValue ?? "?"] = step }
        return result
    }

    package func http(_ method: String, _ path: String, token: String = opsToken, body: String? = nil) throws -> HTTPProbe.Answer {
        try HTTPProbe.request(method, path, port: port, token: token, body: body)
    }

    @discardableResult
    package static func wait(timeout: Double = 30, _ condition: () throws -> Bool) rethrows -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if try condition() { return true }
            Thread.sleep(forTimeInterval: 0.1)
        }
        return try condition()
    }

    package static func lines(_ path: String) -> [String] {
        ((try? String(contentsOfFile: path, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
    }
}
