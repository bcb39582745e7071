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
            // A missing member is pointed at, not at the whole request.
            ("PUT", "/api/memory/entry", #"{"value": 1}"#, #"{"command": "memory_set", "value": 1}"#, "/key"),
            ("POST", "/api/settings/changes", #"{"changes": [{"action": "add_workflow_step", "name": "w", "step": {}, "position": "x"}]}"#,
             #"{"command": "settings_change", "changes": [{"action": "add_workflow_step", "name": "w", "step": {}, "position": "x"}]}"#, "/changes/0/position"),
            ("GET", "/api/processes/trades/logs?lines=-1", "", #"{"command": "logs", "name": "trades", "lines": -1}"#, "/lines"),
            ("GET", "/api/readiness?failures=0", "", #"{"command": "readiness", "failures": 0}"#, "/failures"),
        ] + Self.adversarysCases
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
        // A message keeps its line breaks and tabs: refused only for want of a chatbot.
        let lines = RawControlClient.request(socket, #"{"command": "chat", "text": "one\r\ntwo\tthree"}"#)
        #expect(lines?["code"] as? String == "failed", "\(String(describing: lines))")
        #expect((lines?["error"] as? String)?.contains("no chatbot process is configured") == true, "\(String(describing: lines))")
        // The process command with an unknown member stopped nothing.
        #expect(try agent.statusField("trades", "state") as? String == "running")
    }

    /// Requests the fronts used to refuse differently, or not at all (stop 46's adversary).
    static let adversarysCases: [(method: String, path: String, body: String, line: String, pointer: String)] = {
        let deep = String(repeating: "[", count: 101) + "1" + String(repeating: "]", count: 101)
        return [
            // "found null" over the socket, `found "1e999999"` over HTTP.
            ("GET", "/api/processes/trades/logs?since=1e999999", "", #"{"command": "logs", "name": "trades", "since": 1e999999}"#, "/since"),
            ("GET", "/api/events?after=9223372036854775808", "", #"{"command": "events", "after": 9223372036854775808}"#, "/after"),
            ("GET", "/api/readiness?window=1e-999999", "", #"{"command": "readiness", "window": 1e-999999}"#, "/window"),
            ("PUT", "/api/memory/entry", #"{"key": "a\u0007b", "value": 1}"#, #"{"command": "memory_set", "key": "a\u0007b", "value": 1}"#, "/key"),
            ("PUT", "/api/memory/entry", #"{"key": "deep", "value": \#(deep)}"#, #"{"command": "memory_set", "key": "deep", "value": \#(deep)}"#,
             "/value" + String(repeating: "/0", count: 100)),
            // An unknown query parameter is worded as an unknown member of a body.
            ("GET", "/api/status?verbose=1", "", #"{"command": "status", "verbose": 1}"#, "/verbose"),
        ] + lastStopsCases
    }()

    /// What stop 47's adversary left: control characters in free text were taken, `since`
    /// durations beyond 100 years clamped to "everything".
    static let lastStopsCases: [(method: String, path: String, body: String, line: String, pointer: String)] = [
        ("GET", "/api/events?type=a%01b", "", #"{"command": "events", "type": "a\u0001b"}"#, "/type"),
        ("GET", "/api/events?source=%1B%5B31m", "", #"{"command": "events", "source": "\u001b[31m"}"#, "/source"),
        ("GET", "/api/memory?prefix=a%07", "", #"{"command": "memory_list", "prefix": "a\u0007"}"#, "/prefix"),
        ("POST", "/api/chat", #"{"text": "a\u001b[2Jb"}"#, #"{"command": "chat", "text": "a\u001b[2Jb"}"#, "/text"),
        ("POST", "/api/chat", #"{"text": "nul\u0000"}"#, #"{"command": "chat", "text": "nul\u0000"}"#, "/text"),
        ("GET", "/api/events?since=1e308s", "", #"{"command": "events", "since": "1e308s"}"#, "/since"),
        ("GET", "/api/processes/trades/logs?since=36600d", "", #"{"command": "logs", "name": "trades", "since": "36600d"}"#, "/since"),
        // Pointed at in the request as well as in the settings file (its `errors`).
        ("POST", "/api/workflows", #"{"name": "w", "definition": {"steps": [{"id": "a", "task": "nosuch"}]}}"#,
         #"{"command": "workflow_create", "name": "w", "definition": {"steps": [{"id": "a", "task": "nosuch"}]}}"#, "/definition/steps/0/task"),
    ]

    @Test func aRepeatedKeyIsRefusedAtItsMemberOnBothFrontsAndNothingRuns() throws {
        let agent = try HTTPAgent(processes: Self.trades)
        #expect(HTTPAgent.eventually { (try? agent.statusField("trades", "state")) as? String == "running" })
        let socket = agent.run.directory + "/.agent/run/control.sock"
        #expect(HTTPAgent.eventually { RawControlClient.request(socket, #"{"command": "status"}"#) != nil })
        // The last one used to win: this stopped the agent.
        let stop = RawControlClient.request(socket, #"{"command": "status", "command": "stop"}"#)
        #expect(stop?["code"] as? String == "invalid" && stop?["pointer"] as? String == "/command", "\(String(describing: stop))")
        #expect((stop?["error"] as? String)?.contains(#"the key "command" appears twice in one object; keep one of them"#) == true, "\(String(describing: stop))")
        let chat = RawControlClient.request(socket, #"{"command": "chat", "text": "a", "text": "b"}"#)
        #expect(chat?["code"] as? String == "invalid" && chat?["pointer"] as? String == "/text", "\(String(describing: chat))")
        let body = try agent.request("POST", "/api/chat", body: #"{"text": "a", "text": "b"}"#)
        #expect(body.status == 400 && body.json?["code"] as? String == "invalid" && body.json?["pointer"] as? String == "/text", "\(body)")
        #expect((body.json?["error"] as? String)?.hasPrefix("the body is not valid JSON at line 1, column 15: the key \"text\" appears twice") == true, "\(body)")
        let query = try agent.request("GET", "/api/events?limit=1&limit=2")
        #expect(query.status == 400 && query.json?["pointer"] as? String == "/limit", "\(query)")
        // A number with spaces around is no number; invalid JSON over the socket has its code.
        let spaced = try agent.request("GET", "/api/events?limit=%205%20")
        #expect(spaced.status == 400 && spaced.json?["pointer"] as? String == "/limit", "\(spaced)")
        let notJSON = RawControlClient.request(socket, #"{"command": "status""#)
        #expect(notJSON?["code"] as? String == "invalid", "\(String(describing: notJSON))")
        #expect(try agent.statusField("trades", "state") as? String == "running")
        #expect(agent.run.process.isRunning)
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
