import Foundation

/// A real `agent-control console` with `"http"` on a free loopback port, reached with curl.
package final class APIAgent: @unchecked Sendable {
    /// An admin token and a read token, passed through the environment as `${env:}`.
    package static let adminToken = "admin-token-0123456789abcdef"
    package static let readToken = "read-token-0123456789abcdef"
    package static let environment = ["AGENT_API_TOKEN": adminToken, "AGENT_READ_TOKEN": readToken]

    package let run: AgentRun
    /// `http://127.0.0.1:PORT` (https under TLS).
    package let base: String

    /// `http` is the JSON of `"http"` without `listen` (added: 127.0.0.1:0).
    /// `tasks` is the JSON of `"tasks"` (nil: none).
    package init(http: String, processes: String = #"{"trades": {"type": "trade_feed", "pairs": ["A/B"], "interval": 1}}"#,
         tasks: String? = nil, directory: String = TestPaths.temporaryDirectory("http"), environment: [String: String] = [:]) throws {
        let settings = """
        {"enabled_modules": ["sample"], "processes": \(processes),\(tasks.map { #" "tasks": \#($0),"# } ?? "")
         "http": {"listen": "127.0.0.1:0", \(http)}}
        """
        run = try AgentRun(settings: settings, arguments: ["--no-build", "--quiet"], environment: Self.environment.merging(environment) { $1 }, directory: directory)
        let line = run.waitForLine(onStderr: true) { $0.contains("http: listening on ") }
        guard let line, let url = line.components(separatedBy: "listening on ").last?.split(separator: " ").first else {
            throw APIAgentError(description: "the agent did not listen:\n\(run.transcript)")
        }
        base = String(url)
    }

    deinit { _ = run.stop() }

    /// `Authorization: Bearer TOKEN`.
    package static func bearer(_ token: String) -> [String: String] { ["Authorization": "Bearer \(token)"] }

    /// Throws when the agent does not answer within curl's 30 s (exit 28), saying what its
    /// threads were doing: a test that went on would wait as long for each request after it
    /// (theReadRoleReadsButChangesNothing makes some 60; once a filtered run of it was held
    /// for 15 minutes, until the test watchdog ended the process, with nothing said).
    package func request(_ method: String, _ path: String, headers: [String: String] = [:], body: String? = nil, extra: [String] = []) throws -> CurlResponse {
        let answer = try curl(method, base + path, headers: headers, body: body, extra: extra)
        if answer.status == 0, answer.failure?.hasPrefix("curl exited 28") == true {
            let pid = run.process.processIdentifier
            throw APIAgentError(description: """
                the agent did not answer \(method) \(path) within 30 s: \(answer.failure ?? "")
                \(AgentRun.stuckReport(pid, "did not answer \(method) \(path) within 30 s"))
                \(run.transcript.split(separator: "\n").suffix(40).joined(separator: "\n"))
                """)
        }
        return answer
    }

    /// The `detail` of every audit line of the run history.
    package func auditLines(extra: [String] = []) throws -> [String] {
        let answer = try request("GET", "/api/history?limit=1000", headers: Self.bearer(Self.adminToken), extra: extra)
        let entries = answer.json?["entries"] as? [[String: Any]] ?? []
        return entries.filter { $0["event"] as? String == "audit" }.compactMap { $0["detail"] as? String }
    }

    /// Waits (the audit is written by the store's writer) until an audit line satisfies `predicate`.
    package func waitForAudit(timeout: Double = 20, _ predicate: (String) -> Bool) throws -> String? {
        let deadline = Date().addingTimeInterval(timeout)
        repeat {
            if let line = try auditLines().first(where: predicate) { return line }
            Thread.sleep(forTimeInterval: 0.1)
        } while Date() < deadline
        return nil
    }

    /// A bcrypt hash of `password` from `agent-control hash-password` (stdin).
    package static func hash(_ password: String) throws -> String {
        let result = try runProgram("agent-control", ["hash-password"], input: Data((password + "\n").utf8))
        guard result.status == 0 else { throw APIAgentError(description: "hash-password failed: \(result.stderr)") }
        return result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }
}

package struct APIAgentError: Error, CustomStringConvertible {
    package var description: String
}
