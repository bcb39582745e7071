import AgentTestSupport
import Foundation
import Testing

/// A condition whose `pattern` runs out of its step budget on a value is neither passed nor
/// failed: a trigger's `where` that cannot be decided starts nothing and says so in the log
/// (once, then at every power of ten), and a condition step that cannot be decided fails its
/// run with the reason rather than taking the `else` branch as if the value had not matched.
@Suite(.ownThreads) struct UndecidedConditionTests {
    /// A backreference goes to ICU, where 40 `a` cost more than the budget.
    static let slowPattern = #"(a|aa)+\\1c"#
    static let longText = String(repeating: "a", count: 40)

    @Test func anUndecidableWhereStartsNoRunAndIsSaidInTheLog() throws {
        let workflows = #"""
            "workflows": {
              "announce": {"input": {"type": "object", "properties": {"text": {"type": "string"}}},
                           "steps": [{"id": "tell", "publish": {"type": "note.text", "payload": {"text": "${input:/text}"}}}]},
              "choose": {"input": {"type": "object", "properties": {"text": {"type": "string"}}},
                         "steps": [{"id": "copy", "set": {"vars": {"text": "${input:/text}"}}},
                                   {"id": "which", "condition": {"when": {"properties": {"text": {"pattern": "\#(Self.slowPattern)"}}},
                                                                 "then": [{"id": "yes", "set": {"vars": {"branch": "then"}}}],
                                                                 "else": [{"id": "no", "set": {"vars": {"branch": "else"}}}]}}]}},
            """#
        let (agent, port) = try TaskAgent.agent(tasks: #"""
            "on_note": {"type": "command", "command": ["/bin/true"],
                        "on_event": {"type": "note.text", "where": {"properties": {"text": {"pattern": "\#(Self.slowPattern)"}}}}}
            """#, store: workflows)
        defer { _ = agent.stop() }

        // A value the pattern decides (a match) runs the task, so the trigger is live.
        let decided = try TaskAgent.http("POST", "/api/workflows/announce/run", port: port, body: #"{"input": {"text": "aaac"}}"#)
        #expect(decided.status == 200, "\(decided.body)")
        var runs: [[String: Any]] = []
        let deadline = Date().addingTimeInterval(60)
        repeat {
            runs = try TaskAgent.http("GET", "/api/runs?task=on_note", port: port).json["runs"] as? [[String: Any]] ?? []
            if runs.isEmpty { Thread.sleep(forTimeInterval: 0.1) }
        } while runs.isEmpty && Date() < deadline
        #expect(runs.count == 1, "the decided event ran the task once: \(runs)\n\(agent.transcript)")

        // One it cannot decide: no run, and a line that names the condition and the reason.
        let undecided = try TaskAgent.http("POST", "/api/workflows/announce/run", port: port, body: #"{"input": {"text": "\#(Self.longText)"}}"#)
        #expect(undecided.status == 200, "\(undecided.body)")
        let line = agent.waitForLine(onStderr: true) { $0.contains("could not be checked against an event note.text") }
        let said = try #require(line, "\(agent.transcript)")
        #expect(said.contains(#"the "where" of task on_note's on_event"#) && said.contains("steps per validation"), "\(said)")
        runs = try TaskAgent.http("GET", "/api/runs?task=on_note", port: port).json["runs"] as? [[String: Any]] ?? []
        #expect(runs.count == 1, "the undecided event started a run: \(runs)")

        // A condition step that cannot decide fails the run, naming why; it takes no branch.
        let started = try TaskAgent.http("POST", "/api/workflows/choose/run", port: port, body: #"{"input": {"text": "\#(Self.longText)"}}"#)
        let id = try #require((started.json["run"] as? [String: Any])?["id"] as? String, "\(started.body)")
        var run: [String: Any] = [:]
        repeat {
            run = try TaskAgent.http("GET", "/api/workflow-runs/\(id)", port: port).json["run"] as? [String: Any] ?? [:]
            if ["succeeded", "failed"].contains(run["status"] as? String) { break }
            Thread.sleep(forTimeInterval: 0.1)
        } while Date() < deadline
        #expect(run["status"] as? String == "failed", "\(run)")
        #expect((run["variables"] as? [String: Any])?["branch"] == nil, "a branch was taken: \(run)")
        let shown = try TaskAgent.http("GET", "/api/workflow-runs/\(id)", port: port).body
        #expect(shown.contains("the condition could not be decided"), "\(shown)")
    }
}
