import Foundation

/// A real agent (`agent-control console`) with its HTTP front on a free port of 127.0.0.1 and
/// an admin bearer token (from the environment, as the README advises).
package final class HTTPAgent {
    package static let token = "openapi-tests-token-0123456789abcdef"
    /// The header every request of the tests carries.
    package static let authorization = ["Authorization": "Bearer \(token)"]

    package let run: AgentRun
    package let port: Int

    /// `processes` and `modules` as in settings.json; `http` adds members to `"http"`, `settings`
    /// members to the settings (`"tasks": {…}`).
    package init(processes: String = "{}", modules: [String] = ["sample"], http: String = "", store: Bool = true,
         settings: String = "", environment: [String: String] = [:]) throws {
        let extra = http.isEmpty ? "" : ", " + http
        let storeSetting = store ? "" : "\"store\": {\"enabled\": false}, "
        let moduleList = modules.map { "\"\($0)\"" }.joined(separator: ", ")
        run = try AgentRun(settings: """
        {"enabled_modules": [\(moduleList)], \(storeSetting)"http": {"listen": "127.0.0.1:0", "tokens": ["${env:AGENT_API_TOKEN}"]\(extra)}, "processes": \(processes)\(settings.isEmpty ? "" : ", " + settings)}
        """, arguments: ["--no-build"], environment: environment.merging(["AGENT_API_TOKEN": Self.token]) { _, new in new })
        guard let line = run.waitForLine(onStderr: true, { $0.contains("http: listening on http://127.0.0.1:") }),
              let port = line.components(separatedBy: "http: listening on http://127.0.0.1:").last.flatMap({ Int($0.prefix { $0.isNumber }) })
        else { throw RawHTTP.Failure(description: "the agent did not say where it listens:\n\(run.transcript)") }
        self.port = port
    }

    deinit { if run.process.isRunning { _ = run.stop() } }

    package func request(_ method: String, _ path: String, body: String? = nil, headers: [String: String] = [:]) throws -> RawHTTP.Reply {
        try RawHTTP.request(port: port, method, path, body: body, headers: Self.authorization.merging(headers) { _, new in new })
    }

    /// `agent-control status --json` over the control socket.
    package func statusOverTheSocket() throws -> [String: Any] {
        let result = try runProgram("agent-control", ["status", "--json", "--settings", run.settingsFile])
        guard result.status == 0, let object = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any] else {
            throw RawHTTP.Failure(description: "status failed (\(result.status)): \(result.stderr)")
        }
        return object
    }

    /// A process's field in `status --json` over the socket.
    package func statusField(_ process: String, _ field: String) throws -> Any? {
        let processes = try statusOverTheSocket()["processes"] as? [[String: Any]] ?? []
        return processes.first { $0["name"] as? String == process }?[field]
    }

    /// Waits until `condition` holds (at most `timeout` seconds); returns whether it did.
    package static func eventually(timeout: Double = 60, _ condition: () throws -> Bool) rethrows -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if try condition() { return true }
            Thread.sleep(forTimeInterval: 0.1)
        }
        return try condition()
    }
}
