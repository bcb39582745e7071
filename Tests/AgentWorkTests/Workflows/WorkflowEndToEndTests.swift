import AgentTestSupport
import Foundation
import JSONSchema
import Testing

/// Workflows through the whole agent: `agent-control workflow …` over the control socket (and
/// HTTP for approvals) of a real `agent-control console`, real command tasks, the real store.
@Suite(.ownThreads, .serialized) struct WorkflowEndToEndTests {
    /// `double`: {"amount": N} → {"amount": 2N}; `nap`: sleeps input.seconds, prints input.name;
    /// `fail`: exits 3; `keys`: appends its idempotency key to keys.txt.
    static let tasks = #"""
        "double": {"type": "command", "command": ["python3", "-c", "import json,sys; d=json.load(sys.stdin); print(json.dumps({'amount': d['amount']*2}))"]},
        "nap": {"type": "command", "command": "sleep \"$(python3 -c 'import json,sys; print(json.load(sys.stdin)[\"seconds\"])')\"; echo done", "shell": true},
        "fail": {"type": "command", "command": "echo broken >&2; exit 3", "shell": true},
        "keys": {"type": "command", "command": "echo \"$AGENT_TASK_IDEMPOTENCY_KEY\" >> keys.txt; echo '{\"ok\": true}'", "shell": true}
        """#

    static func agent(_ workflows: String, processes: String = "") throws -> WorkflowAgent {
        try WorkflowAgent.start(WorkflowAgent.settings(tasks: tasks, workflows: workflows, processes: processes), directory: TestPaths.temporaryDirectory("workflows"))
    }

    @Test func taskSetAndConditionStepsPassOutputsAlongAndTakeTheRightBranch() throws {
        let agent = try Self.agent(#"""
            "size": {"input": {"type": "object", "required": ["amount"], "properties": {"amount": {"type": "number"}}},
                     "steps": [{"id": "twice", "task": "double", "input": {"amount": "${input:/amount}"}},
                               {"id": "note", "set": {"vars": {"amount": "${steps:twice/amount}", "text": "doubled to ${steps:twice/amount}"}}},
                               {"id": "big", "condition": {"when": {"properties": {"amount": {"minimum": 100}}},
                                                           "then": [{"id": "large", "set": {"vars": {"size": "large"}}}],
                                                           "else": [{"id": "small", "set": {"vars": {"size": "small"}}}]}},
                               {"id": "mark", "task": "keys"}]},
            "remember": {"steps": [{"id": "put", "set": {"memory": {"last_amount": "${input:/amount}"}, "scope": "agent"}},
                                   {"id": "own", "set": {"memory": {"mine": "${input:/amount}"}, "scope": "run"}},
                                   {"id": "get", "set": {"vars": {"seen": "${memory:last_amount}", "own": "${memory:run/mine}"}}}]},
            "tooBig": {"steps": [{"id": "put", "set": {"memory": {"last_amount": "${input:/blob}"}}}, {"id": "after", "set": {"vars": {"x": 1}}}]}
            """#)
        defer { _ = agent.run.stop() }
        let large = try agent.runAndWait("size", input: #"{"amount": 60}"#)
        #expect(large.status == 0, "\(large)\n\(agent.run.transcript)")
        #expect(large.run["status"] == "succeeded")
        // A whole-string reference keeps its type; inside a longer string it is text.
        #expect(large.run["variables"] == ["amount": 120, "text": "doubled to 120", "size": "large"], "\(large.run)")
        #expect(large.steps["twice"]?["output"] == ["amount": 120])
        #expect(large.steps["big"]?["branch"] == "then")
        #expect(large.steps["small"] == nil)
        #expect(large.steps.values.allSatisfy { $0["status"] == "succeeded" && $0["duration"] != nil }, "\(large.steps)")
        let id = try #require(large.run["id"]?.stringValue)
        #expect(large.steps["mark"]?["idempotency_key"] == .string("\(id)/mark/1"))
        #expect(WorkflowAgent.lines(agent.run.directory + "/keys.txt") == ["\(id)/mark/1"])
        let small = try agent.runAndWait("size", input: #"{"amount": 10}"#)
        #expect(small.run["variables"]?["size"] == "small")
        #expect(small.steps["large"] == nil && small.steps["big"]?["branch"] == "else")
        // The input is checked against the workflow's schema before anything runs.
        let refused = try agent.control(["run", "size", "--input", #"{"amount": "ten"}"#])
        #expect(refused.status != 0 && refused.stderr.contains("/input/amount"), "\(refused.stdout)\(refused.stderr)")
        let runs = try agent.control(["runs", "--json"])
        #expect(runs.stdout.split(separator: "\n").count == 2)
        // Shared memory: written by a set step (agent-wide, or the run's own scope), read back by a reference.
        let remembered = try agent.runAndWait("remember", input: #"{"amount": 42}"#)
        #expect(remembered.run["variables"] == ["seen": 42, "own": 42], "\(remembered)")
        // A value the memory refuses (over 256 KiB) fails its step, rather than a step that
        // said "succeeded" and a memory that still held the old value.
        let blob = agent.run.directory + "/blob.json"
        try #"{"blob": "\#(String(repeating: "x", count: 300_000))"}"#.write(toFile: blob, atomically: true, encoding: .utf8)
        let big = try agent.runAndWait("tooBig", input: "@" + blob)
        #expect(big.run["status"] == "failed", "\(big.run)")
        #expect(big.steps["put"]?["status"] == "failed" && big.steps["after"] == nil, "\(big.steps)")
        #expect(big.steps["put"]?["error"]?.stringValue?.contains("memory key \"last_amount\" cannot be written: the value is 300002 bytes") == true, "\(big.steps)")
        let kept = try runProgram("agent-control", ["memory", "get", "last_amount", "--settings", agent.run.settingsFile])
        #expect(kept.stdout.contains("42"), "\(kept.stdout)\(kept.stderr)")
    }

    @Test func parallelBranchesJoinAllOrTheFirstWithTheOthersCancelled() throws {
        let agent = try Self.agent(#"""
            "both": {"steps": [{"id": "fan", "parallel": {"branches": [[{"id": "a", "task": "double", "input": {"amount": 1}}],
                                                                        [{"id": "b", "task": "double", "input": {"amount": 2}}]]}}]},
            "race": {"steps": [{"id": "fan", "parallel": {"join": "first", "branches": [[{"id": "quick", "task": "nap", "input": {"seconds": 0}}],
                                                                                          [{"id": "slow", "task": "nap", "input": {"seconds": 300}}]]}},
                               {"id": "after", "set": {"vars": {"winner": "${steps:fan/branch}"}}}]},
            "broken": {"steps": [{"id": "fan", "parallel": {"branches": [[{"id": "bad", "task": "fail"}], [{"id": "long", "task": "nap", "input": {"seconds": 300}}]]}},
                                 {"id": "never", "set": {"vars": {"x": 1}}}]}
            """#)
        defer { _ = agent.run.stop() }
        let both = try agent.runAndWait("both")
        #expect(both.run["status"] == "succeeded", "\(both)")
        #expect(both.steps["fan"]?["output"] == [["amount": 2], ["amount": 4]])
        let race = try agent.runAndWait("race")
        #expect(race.run["status"] == "succeeded", "\(race)")
        #expect(race.run["variables"]?["winner"] == 0)
        #expect(race.steps["slow"]?["status"] == "cancelled", "\(race.steps)")
        let slowRun = try #require(race.steps["slow"]?["task_run"]?.stringValue)
        let task = try runProgram("agent-control", ["task", "show", slowRun, "--json", "--settings", agent.run.settingsFile])
        #expect(task.stdout.contains("\"cancelled\""), "\(task.stdout)")
        let broken = try agent.runAndWait("broken")
        #expect(broken.status != 0 && broken.run["status"] == "failed", "\(broken)")
        #expect(broken.run["error"]?.stringValue?.contains("step bad failed") == true, "\(broken.run)")
        #expect(broken.steps["long"]?["status"] == "cancelled" && broken.steps["never"] == nil, "\(broken.steps)")
    }

    @Test func aWaitingRunGoesOnWithTheFirstMatchingEventAndTimeoutsContinueOrGoToTheEscalation() throws {
        let agent = try Self.agent(#"""
            "waiter": {"steps": [{"id": "paid", "wait_event": {"type": "order.paid", "where": {"required": ["order"], "properties": {"order": {"const": 7}}}}},
                                 {"id": "thanks", "publish": {"type": "order.thanked", "payload": {"order": "${steps:paid/payload/order}"}}}]},
            "payer": {"input": {"type": "object", "properties": {"order": {"type": "integer"}}},
                      "steps": [{"id": "pay", "publish": {"type": "order.paid", "payload": {"order": "${input:/order}"}}}]},
            "patient": {"steps": [{"id": "w", "wait_event": {"type": "never.comes", "timeout": 0.3, "on_timeout": "continue"}}, {"id": "next", "set": {"vars": {"went_on": true}}}]},
            "escalating": {"steps": [{"id": "w", "wait_event": {"type": "never.comes", "timeout": 0.3, "on_timeout": {"goto": "escalate"}}},
                                     {"id": "normal", "set": {"vars": {"path": "normal"}}},
                                     {"id": "escalate", "set": {"vars": {"path": "escalated"}}}]},
            "strict": {"steps": [{"id": "w", "wait_event": {"type": "never.comes", "timeout": 0.3}}]},
            "thanked": {"on_event": {"type": "order.thanked", "where": {"properties": {"order": {"const": 7}}}},
                        "steps": [{"id": "seen", "set": {"vars": {"order": "${input:/payload/order}", "from": "${input:/source}"}}}]}
            """#)
        defer { _ = agent.run.stop() }
        let id = try agent.start("waiter")
        #expect(try WorkflowAgent.wait { try agent.show(id).run["status"] == "waiting" })
        #expect(try agent.runAndWait("payer", input: #"{"order": 8}"#).run["status"] == "succeeded")
        Thread.sleep(forTimeInterval: 0.3)
        #expect(try agent.show(id).run["status"] == "waiting", "an event that fails `where` released the wait")
        #expect(try agent.runAndWait("payer", input: #"{"order": 7}"#).run["status"] == "succeeded")
        #expect(try WorkflowAgent.wait { try agent.show(id).run["status"] == "succeeded" })
        let waited = try agent.show(id)
        #expect(waited.steps["paid"]?["output"]?["payload"] == ["order": 7], "\(waited.steps)")
        #expect(waited.steps["paid"]?["output"]?["source"] == "workflow:payer")
        #expect(waited.steps["thanks"]?["output"] == ["order": 7])
        // `on_event`: the published event started a run of "thanked" with the event as input.
        #expect(try WorkflowAgent.wait {
            let runs = try agent.control(["runs", "--workflow", "thanked", "--json"]).stdout.split(separator: "\n")
            guard runs.count == 1 else { return false }
            let run = try JSONValue.parse(Data(runs[0].utf8))
            return run["variables"] == ["order": 7, "from": "workflow:waiter"]
        })

        let patient = try agent.runAndWait("patient")
        #expect(patient.run["status"] == "succeeded" && patient.run["variables"] == ["went_on": true], "\(patient)")
        let escalating = try agent.runAndWait("escalating")
        #expect(escalating.run["status"] == "succeeded", "\(escalating)")
        #expect(escalating.run["variables"] == ["path": "escalated"], "\(escalating.run)")
        #expect(escalating.steps["w"]?["status"] == "timed_out" && escalating.steps["normal"] == nil)
        let strict = try agent.runAndWait("strict")
        #expect(strict.run["status"] == "failed" && strict.steps["w"]?["status"] == "timed_out", "\(strict)")
    }

    @Test func anApprovalWaitsForAnApproverAndRecordsWhoAndWhy() throws {
        let agent = try Self.agent(#"""
            "refund": {"input": {"type": "object", "properties": {"amount": {"type": "number"}}},
                       "steps": [{"id": "ok", "approval": {"approvers": ["alice"], "prompt": "Refund ${input:/amount} EUR?"}},
                                 {"id": "pay", "task": "keys"}]}
            """#)
        defer { _ = agent.run.stop() }
        let id = try agent.start("refund", input: #"{"amount": 250}"#)
        #expect(try WorkflowAgent.wait { try agent.show(id).steps["ok"]?["status"] == "waiting" })
        #expect(try agent.show(id).steps["ok"]?["prompt"] == "Refund 250 EUR?")
        // Over HTTP only an approver may answer: ops (an admin, not named) is refused, alice is not.
        let refused = try agent.http("POST", "/api/workflow-runs/\(id)/steps/ok/approve", body: #"{"comment": "fine"}"#)
        #expect(refused.body.contains("may not answer"), "\(refused.status) \(refused.body)")
        #expect(try agent.show(id).steps["ok"]?["status"] == "waiting")
        let approved = try agent.http("POST", "/api/workflow-runs/\(id)/steps/ok/approve", token: WorkflowAgent.aliceToken, body: #"{"comment": "customer is right"}"#)
        #expect(approved.status == 200, "\(approved.status) \(approved.body)")
        #expect(try WorkflowAgent.wait { try agent.show(id).run["status"] == "succeeded" })
        let decision = try agent.show(id).steps["ok"]?["decision"]
        #expect(decision?["decision"] == "approved" && decision?["by"] == "alice" && decision?["comment"] == "customer is right", "\(String(describing: decision))")
        // The audit says who approved what, and why.
        let audited = try WorkflowAgent.wait {
            let history = try agent.http("GET", "/api/history?limit=1000").body
            return history.contains("workflow_approve \(id) ok (comment: customer is right)") && history.contains("user alice")
        }
        let history = try agent.http("GET", "/api/history?limit=1000").body
        #expect(audited, "\(history)")

        // Rejected on the command line (the operator): the run fails with the comment; pay never ran.
        let second = try agent.start("refund", input: #"{"amount": 9000}"#)
        #expect(try WorkflowAgent.wait { try agent.show(second).steps["ok"]?["status"] == "waiting" })
        let rejected = try agent.control(["reject", second, "ok", "--comment", "too much"])
        #expect(rejected.status == 0, "\(rejected.stdout)\(rejected.stderr)")
        #expect(try WorkflowAgent.wait { try agent.show(second).run["status"] == "failed" })
        let failed = try agent.show(second)
        #expect(failed.run["error"]?.stringValue?.contains("too much") == true && failed.steps["pay"] == nil, "\(failed)")
        #expect(WorkflowAgent.lines(agent.run.directory + "/keys.txt").count == 1)
    }

    @Test func aChatStepAsksANamedLogicAdapterAndItsAnswerIsTheOutput() throws {
        let agent = try Self.agent(#"""
            "ask": {"steps": [{"id": "q", "chat": {"text": "how are the processes?", "adapter": "status"}},
                              {"id": "keep", "set": {"vars": {"answer": "${steps:q}"}}}]}
            """#, processes: #""bot": {"type": "chatbot", "logic_adapters": ["features", "status"]}"#)
        defer { _ = agent.run.stop() }
        // Asked once the chatbot is ready (this waited 60 s for a line that never comes, and
        // could not fail: `!= nil || true`).
        #expect(agent.run.waitForLine(onStderr: true) { $0.contains("[bot] ready in") } != nil, "\(agent.run.transcript)")
        let result = try agent.runAndWait("ask")
        #expect(result.run["status"] == "succeeded", "\(result)\n\(agent.run.transcript)")
        let answer = try #require(result.run["variables"]?["answer"]?.stringValue)
        #expect(answer.contains("bot"), "\(answer)")
    }
}
