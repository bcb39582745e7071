import AgentTestSupport
import Foundation
import JSONSchema
import Testing

/// Events published from outside (`agent-control publish`, POST /api/events), `wait_event`'s
/// `where` resolved per run, and signals to one run — through a real `agent-control console`
/// with its store and HTTP front.
@Suite(.ownThreads, .serialized) struct WorkflowCorrelationTests {
    /// `refund`: waits for the `order.confirmed` of its own order; `reply`: waits for the signal
    /// `customer.replied`; `two`: waits for `go`, then for `early` (sent before it got there).
    static let workflows = #"""
        "refund": {"input": {"type": "object", "required": ["order"], "properties": {"order": {"type": "integer"}}},
                   "steps": [{"id": "confirmed", "wait_event": {"type": "order.confirmed", "where": {"properties": {"order": {"const": "${input:/order}"}}}}},
                             {"id": "done", "set": {"vars": {"amount": "${steps:confirmed/payload/amount}"}}}]},
        "reply": {"steps": [{"id": "answer", "wait_signal": {"name": "customer.replied"}},
                            {"id": "done", "set": {"vars": {"text": "${steps:answer/payload/text}"}}}]},
        "two": {"steps": [{"id": "first", "wait_signal": {"name": "go"}},
                          {"id": "second", "wait_signal": {"name": "early"}},
                          {"id": "done", "set": {"vars": {"early": "${steps:second/payload}"}}}]}
        """#

    static let readerToken = "reader-token-0123456789abcdef"
    static let feederToken = "feeder-token-0123456789abcdef"

    /// Tokens: `ops` (admin), `reader` (read), `feeder` (read, granted `publish`); `order.confirmed`
    /// declares its payload's schema; payloads of at most 1,024 bytes.
    static func settings() -> String {
        #"""
        {"enabled_modules": [], "processes": {},
         "http": {"listen": "127.0.0.1:0", "tokens": [{"token": "${env:OPS_TOKEN}", "name": "ops"},
                                                      {"token": "${env:READER_TOKEN}", "name": "reader", "role": "read"},
                                                      {"token": "${env:FEEDER_TOKEN}", "name": "feeder", "role": "read", "grants": ["publish"]}]},
         "events": {"max_payload_bytes": 1024,
                    "types": {"order.confirmed": {"description": "The shop confirmed an order.",
                                                  "schema": {"type": "object", "required": ["order"], "properties": {"order": {"type": "integer"}}}}}},
         "workflows": {\#(workflows)}}
        """#
    }

    static func agent(directory: String = TestPaths.temporaryDirectory("correlation"), fresh: Bool = true) throws -> WorkflowAgent {
        try WorkflowAgent.start(fresh ? settings() : nil, directory: directory,
                                environment: ["READER_TOKEN": readerToken, "FEEDER_TOKEN": feederToken])
    }

    static func publish(_ agent: WorkflowAgent, _ body: String, token: String = WorkflowAgent.opsToken) throws -> HTTPProbe.Answer {
        try agent.http("POST", "/api/events", token: token, body: body)
    }

    @Test func theEventForOrder7ReleasesOnlyTheRunWaitingForOrder7() throws {
        let agent = try Self.agent()
        defer { _ = agent.run.stop() }
        let seven = try agent.start("refund", input: #"{"order": 7}"#)
        let nine = try agent.start("refund", input: #"{"order": 9}"#)
        #expect(try WorkflowAgent.wait { try agent.show(seven).run["status"] == "waiting" && agent.show(nine).run["status"] == "waiting" })
        // The reference was resolved once, when the step started, and is kept in its record.
        #expect(try agent.show(nine).steps["confirmed"]?["where"] == ["properties": ["order": ["const": 9]]])

        let published = try Self.publish(agent, #"{"type": "order.confirmed", "payload": {"order": 7, "amount": 150}}"#)
        #expect(published.status == 200, "\(published.body)")
        #expect(published.json["stored"] as? Bool == true && published.json["source"] as? String == "api", "\(published.body)")
        #expect(try WorkflowAgent.wait { try agent.show(seven).run["status"] == "succeeded" }, "\(agent.run.transcript)")
        // The same event was offered to both in the same turn: the run for 9 is still waiting.
        #expect(try agent.show(nine).run["status"] == "waiting")
        #expect(try agent.show(seven).run["variables"] == ["amount": 150])

        // From the CLI, with a source: the run for 9 goes on.
        let cli = try runProgram("agent-control", ["publish", "order.confirmed", "--payload", #"{"order": 9, "amount": 20}"#, "--source", "shop",
                                                   "--json", "--settings", agent.run.settingsFile], timeout: 60)
        #expect(cli.status == 0, "\(cli.stdout)\(cli.stderr)")
        #expect(try WorkflowAgent.wait { try agent.show(nine).run["status"] == "succeeded" })
        // Both are in the event log, with their sources, and audited.
        let events = try runProgram("agent-control", ["events", "--json", "--settings", agent.run.settingsFile], timeout: 60).stdout
        #expect(events.contains(#""source":"api""#) && events.contains(#""source":"shop""#), "\(events)")
        let history = try runProgram("agent-control", ["history", "--settings", agent.run.settingsFile], timeout: 60).stdout
        #expect(history.contains("event_publish order.confirmed as shop → ok"), "\(history)")
    }

    @Test func aSignalReleasesOnlyItsRunAndOneSentEarlyIsKeptForTheStep() throws {
        let agent = try Self.agent()
        defer { _ = agent.run.stop() }
        let first = try agent.start("reply")
        let second = try agent.start("reply")
        #expect(try WorkflowAgent.wait { try agent.show(first).run["status"] == "waiting" && agent.show(second).run["status"] == "waiting" })
        let sent = try agent.control(["signal", first, "customer.replied", "--payload", #"{"text": "yes"}"#, "--json"])
        #expect(sent.status == 0 && sent.stdout.contains(#""step":"answer""#), "\(sent.stdout)\(sent.stderr)")
        #expect(try WorkflowAgent.wait { try agent.show(first).run["status"] == "succeeded" })
        #expect(try agent.show(first).run["variables"] == ["text": "yes"])
        #expect(try agent.show(second).run["status"] == "waiting", "a signal went to another run than its own")
        let overHTTP = try agent.http("POST", "/api/workflow-runs/\(second)/signals/customer.replied", body: #"{"payload": {"text": "no"}}"#)
        #expect(overHTTP.status == 200, "\(overHTTP.body)")
        #expect(try WorkflowAgent.wait { try agent.show(second).run["variables"] == ["text": "no"] })

        // Sent before the run reaches its step: kept (committed), taken when the step starts.
        let two = try agent.start("two")
        #expect(try WorkflowAgent.wait { try agent.show(two).steps["first"]?["status"] == "waiting" })
        let early = try agent.http("POST", "/api/workflow-runs/\(two)/signals/early", body: #"{"payload": {"n": 1}}"#)
        #expect(early.status == 200 && early.json["kept"] as? Bool == true, "\(early.body)")
        #expect(try agent.show(two).run["signals"]?.arrayValue?.count == 1)
        #expect(try agent.control(["signal", two, "go"]).status == 0)
        #expect(try WorkflowAgent.wait { try agent.show(two).run["status"] == "succeeded" })
        #expect(try agent.show(two).run["variables"] == ["early": ["n": 1]])
        #expect(try agent.show(two).run["signals"] == nil)

        // A finished run: a conflict; an unknown one: not found; a bad name: at its pointer.
        let finished = try agent.http("POST", "/api/workflow-runs/\(first)/signals/customer.replied", body: "{}")
        #expect(finished.status == 409 && finished.body.contains("has finished (succeeded)"), "\(finished.body)")
        let unknown = try agent.http("POST", "/api/workflow-runs/wf-nope-1/signals/customer.replied", body: "{}")
        #expect(unknown.status == 404, "\(unknown.body)")
        let badName = try agent.http("POST", "/api/workflow-runs/\(second)/signals/a%20b", body: "{}")
        #expect(badName.status == 400 && badName.json["pointer"] as? String == "/name", "\(badName.body)")
        let cli = try agent.control(["signal", "wf-nope-1", "customer.replied"])
        #expect(cli.status != 0 && cli.stderr.contains("no workflow run wf-nope-1"), "\(cli.stderr)")
    }

    @Test func publishRefusesABadTypeABigPayloadASchemaMismatchAndTheReadRoleEachAtItsPointer() throws {
        let agent = try Self.agent()
        defer { _ = agent.run.stop() }
        let cases: [(body: String, status: Int, pointer: String?, says: String)] = [
            (#"{"type": "order confirmed"}"#, 400, "/type", "may contain only letters"),
            (#"{"type": "task.succeeded"}"#, 400, "/type", "the runtime publishes itself"),
            (#"{"type": "fleet:order"}"#, 400, "/type", "may contain only letters"),
            (#"{"type": "a\u001bb"}"#, 400, "/type", "may contain only letters"),
            (#"{"type": "big", "payload": {"text": "\#(String(repeating: "x", count: 2_000))"}}"#, 413, "/payload", "at most 1024"),
            (#"{"type": "order.confirmed", "payload": {"order": "seven"}}"#, 400, "/payload/order", "the schema declared for"),
            (#"{"type": "order.confirmed", "payload": {}}"#, 400, "/payload", "order"),
            (#"{"type": "ok", "source": "tasks"}"#, 400, "/source", "runtime's own events"),
        ]
        for item in cases {
            let answer = try Self.publish(agent, item.body)
            #expect(answer.status == item.status, "\(item.body.prefix(80)): \(answer.status) \(answer.body)")
            #expect(answer.json["pointer"] as? String == item.pointer, "\(item.body.prefix(80)): \(answer.body)")
            #expect(answer.body.contains(item.says), "\(item.body.prefix(80)): \(answer.body)")
        }
        // The read role may not publish; a read token granted `publish` may, and nothing else.
        let reader = try Self.publish(agent, #"{"type": "ok"}"#, token: Self.readerToken)
        #expect(reader.status == 403 && reader.body.contains("grants"), "\(reader.body)")
        let feeder = try Self.publish(agent, #"{"type": "ok", "payload": {"n": 1}}"#, token: Self.feederToken)
        #expect(feeder.status == 200, "\(feeder.body)")
        let other = try agent.http("POST", "/api/workflows/reply/run", token: Self.feederToken, body: "{}")
        #expect(other.status == 403, "\(other.body)")
        let cli = try runProgram("agent-control", ["publish", "bad type", "--settings", agent.run.settingsFile], timeout: 60)
        #expect(cli.status != 0 && cli.stderr.contains("event type \"bad type\""), "\(cli.stderr)")
        // Refused requests are audited too.
        let history = try runProgram("agent-control", ["history", "--settings", agent.run.settingsFile], timeout: 60).stdout
        #expect(history.contains("event_publish task.succeeded → refused"), "\(history)")
    }

    @Test func aRestartWhileWaitingKeepsEachRunsCorrelationAndItsKeptSignals() throws {
        let directory = TestPaths.temporaryDirectory("correlation-restart")
        var agent = try Self.agent(directory: directory)
        let seven = try agent.start("refund", input: #"{"order": 7}"#)
        let nine = try agent.start("refund", input: #"{"order": 9}"#)
        let two = try agent.start("two")
        #expect(try WorkflowAgent.wait {
            try agent.show(seven).run["status"] == "waiting" && agent.show(nine).run["status"] == "waiting" && agent.show(two).run["status"] == "waiting"
        })
        #expect(try agent.control(["signal", two, "early", "--payload", #"{"n": 2}"#]).status == 0)
        #expect(agent.run.stop() == 0, "\(agent.run.transcript)")

        agent = try Self.agent(directory: directory, fresh: false)
        defer { _ = agent.run.stop() }
        #expect(try Self.publish(agent, #"{"type": "order.confirmed", "payload": {"order": 9, "amount": 1}}"#).status == 200)
        #expect(try WorkflowAgent.wait { try agent.show(nine).run["status"] == "succeeded" }, "\(agent.run.transcript)")
        #expect(try agent.show(seven).run["status"] == "waiting", "after the restart the run for 7 took the event for 9")
        #expect(try Self.publish(agent, #"{"type": "order.confirmed", "payload": {"order": 7, "amount": 2}}"#).status == 200)
        #expect(try WorkflowAgent.wait { try agent.show(seven).run["status"] == "succeeded" })
        #expect(try agent.control(["signal", two, "go"]).status == 0)
        #expect(try WorkflowAgent.wait { try agent.show(two).run["status"] == "succeeded" })
        #expect(try agent.show(two).run["variables"] == ["early": ["n": 2]])
    }
}
