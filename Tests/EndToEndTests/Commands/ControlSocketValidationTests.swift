import AgentTestSupport
import Foundation
import Testing

/// The control socket checks a request against the registry's schema as the HTTP API does:
/// the same refusal, with the same JSON pointer, and nothing done.
@Suite(.ownThreads, .serialized) struct ControlSocketValidationTests {
    static let trades = #"{"trades": {"type": "trade_feed", "pairs": ["X/Y"], "interval": 0.01}}"#

    @Test func aWrongTypedOrUnknownFieldGetsOverTheSocketTheRefusalHTTPGives() throws {
        let agent = try HTTPAgent(processes: Self.trades)
        #expect(HTTPAgent.eventually { (try? agent.statusField("trades", "state")) as? String == "running" })
        let socket = agent.run.directory + "/.agent/run/control.sock"

        let cases: [(method: String, path: String, body: String, line: String, pointer: String)] = [
            ("POST", "/api/chat", #"{"text": 5}"#, #"{"command": "chat", "text": 5}"#, "/text"),
            ("POST", "/api/processes/trades/stop", #"{"colour": "red"}"#,
             #"{"command": "process", "action": "stop", "name": "trades", "colour": "red"}"#, "/colour"),
            ("GET", "/api/runs?limit=0", "", #"{"command": "task_runs", "limit": 0}"#, "/limit"),
            ("POST", "/api/tasks/x/run", #"{"priority": "urgent"}"#, #"{"command": "task_run", "name": "x", "priority": "urgent"}"#, "/priority"),
            ("POST", "/api/workflows/x/run", #"{"wait": "yes"}"#, #"{"command": "workflow_run", "name": "x", "wait": "yes"}"#, "/wait"),
            ("POST", "/api/runs/r1/assign", #"{"to": 3}"#, #"{"command": "task_assign", "id": "r1", "to": 3}"#, "/to"),
            ("POST", "/api/workflow-runs/w1/steps/ask/approve", #"{"comment": ["no"]}"#,
             #"{"command": "workflow_approve", "id": "w1", "step": "ask", "comment": ["no"]}"#, "/comment"),
            ("PUT", "/api/workflows/x", #"{"definition": []}"#, #"{"command": "workflow_update", "name": "x", "definition": []}"#, "/definition"),
            ("PUT", "/api/memory/entry", #"{"key": "k", "value": 1, "expected_version": -1}"#,
             #"{"command": "memory_set", "key": "k", "value": 1, "expected_version": -1}"#, "/expected_version"),
            ("PUT", "/api/memory/entry", #"{"value": 1}"#, #"{"command": "memory_set", "value": 1}"#, ""),
            ("POST", "/api/settings/changes", #"{"changes": [{"action": "add_workflow_step", "name": "w", "step": {}, "position": "x"}]}"#,
             #"{"command": "settings_change", "changes": [{"action": "add_workflow_step", "name": "w", "step": {}, "position": "x"}]}"#, "/changes/0/position"),
            ("GET", "/api/processes/trades/logs?lines=-1", "", #"{"command": "logs", "name": "trades", "lines": -1}"#, "/lines"),
            ("GET", "/api/readiness?failures=0", "", #"{"command": "readiness", "failures": 0}"#, "/failures"),
        ]
        for item in cases {
            let http = try agent.request(item.method, item.path, body: item.body.isEmpty ? nil : item.body)
            #expect(http.status == 400, "\(item.path): \(http)")
            #expect(http.json?["pointer"] as? String == item.pointer, "\(item.path): \(http)")
            let answer = RawControlClient.request(socket, item.line)
            #expect(answer?["ok"] as? Bool == false, "\(item.line): \(String(describing: answer))")
            #expect(answer?["code"] as? String == "invalid", "\(item.line): \(String(describing: answer))")
            #expect(answer?["pointer"] as? String == item.pointer, "\(item.line): \(String(describing: answer))")
            #expect(answer?["error"] as? String == http.json?["error"] as? String, "\(item.line): \(String(describing: answer)) vs \(http)")
        }
        // The process command with an unknown member stopped nothing.
        #expect(try agent.statusField("trades", "state") as? String == "running")
    }

    @Test func anUnknownCommandOverTheSocketIsOfferedEveryCommandOfTheRegistry() throws {
        let agent = try HTTPAgent(processes: Self.trades)
        let socket = agent.run.directory + "/.agent/run/control.sock"
        // The HTTP front may answer before the control socket listens.
        #expect(HTTPAgent.eventually { RawControlClient.request(socket, #"{"command": "status"}"#) != nil })
        let misspelled = RawControlClient.request(socket, #"{"command": "task_asign", "id": "x"}"#)
        let error = misspelled?["error"] as? String ?? ""
        #expect(error.contains(#"unknown command "task_asign"; did you mean "task_assign"?"#), "\(error)")
        for name in ["workflow_add_step", "memory_set", "schedule_next", "executor_drain", "events", "history"] {
            #expect(error.contains(name), "\(name) missing: \(error)")
        }
        // `events` is a command of the socket too (read off the loop).
        let events = RawControlClient.request(socket, #"{"command": "events", "limit": 5}"#)
        #expect(events?["ok"] as? Bool == true, "\(String(describing: events))")
    }
}
