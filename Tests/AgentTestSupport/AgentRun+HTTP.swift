import Foundation

extension AgentRun {
    /// An agent started from `settings` whose `"http"` listens on `127.0.0.1:0`, and the base
    /// URL it says it listens on (`http://127.0.0.1:PORT`).
    package static func listening(settings: String, environment: [String: String] = [:]) throws -> (AgentRun, String) {
        let agent = try AgentRun(settings: settings, arguments: ["--no-build", "--quiet"], environment: environment)
        guard let line = agent.waitForLine(onStderr: true, { $0.contains("http: listening on http://127.0.0.1:") }),
              let range = line.range(of: #"http://127\.0\.0\.1:\d+"#, options: .regularExpression) else {
            _ = agent.stop()
            throw HTTPFrontFailure(description: "the HTTP front did not start\n\(agent.transcript)")
        }
        return (agent, String(line[range]))
    }
}

/// An agent whose HTTP front did not start.
package struct HTTPFrontFailure: Error, CustomStringConvertible {
    package var description: String
}
