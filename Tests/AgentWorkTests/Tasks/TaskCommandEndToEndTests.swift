import AgentTestSupport
import Foundation
import Testing

/// Real commands run by a real agent, asked for with the real `agent-control task …`: exit
/// statuses, retries, timeouts, cancellation, and a crash of the agent while a run runs.
@Suite(.ownThreads) struct TaskCommandEndToEndTests {
    static let tasks = #"""
        "ok": {"type": "command", "command": ["/bin/true"]},
        "no": {"type": "command", "command": ["/bin/false"]},
        "three": {"type": "command", "command": "exit 3", "shell": true,
                  "retries": {"max": 2, "initial_delay": 0.1, "multiplier": 2, "max_delay": 1}},
        "echo": {"type": "command", "command": ["/bin/cat"], "input": {"type": "object", "required": ["word"]}},
        "slow": {"type": "command", "command": ["/bin/sleep", "30"], "timeout": 0.5},
        "long": {"type": "command", "command": ["/bin/sleep", "30"]},
        "once": {"type": "command", "command": "if [ \"$AGENT_TASK_ATTEMPT\" = 1 ]; then sleep 30; fi; echo \"{\\\"attempt\\\": $AGENT_TASK_ATTEMPT, \\\"run\\\": \\\"$AGENT_TASK_RUN_ID\\\"}\"", "shell": true}
        """#

    static func task(_ agent: AgentRun, _ arguments: [String]) throws -> ProgramResult {
        try TaskAgent.control(agent, arguments)
    }


    @Test func waitExitsZeroOnlyWhenTheRunSucceeded() throws {
        let (agent, port) = try TaskAgent.agent(tasks: Self.tasks)
        defer { _ = agent.stop() }
        let ok = try Self.task(agent, ["run", "ok", "--wait"])
        #expect(ok.status == 0, "\(ok.stdout)\(ok.stderr)")
        #expect(TaskAgent.fields(ok.stdout)["status"] == "succeeded")
        #expect(TaskAgent.fields(ok.stdout)["exit_code"] == "0")

        let no = try Self.task(agent, ["run", "no", "--wait"])
        #expect(no.status == 1)
        #expect(TaskAgent.fields(no.stdout)["status"] == "failed")

        let three = try Self.task(agent, ["run", "three", "--wait", "--json"])
        #expect(three.status == 1)
        let run = try #require(try JSONSerialization.jsonObject(with: Data(three.stdout.utf8)) as? [String: Any])
        #expect(run["status"] as? String == "failed")
        #expect(run["exit_code"] as? Int == 3)
        #expect(run["attempt"] as? Int == 3, "two retries after the first attempt")

        let echoed = try Self.task(agent, ["run", "echo", "--input", #"{"word": "hello"}"#, "--wait", "--json"])
        #expect(echoed.status == 0)
        let output = (try JSONSerialization.jsonObject(with: Data(echoed.stdout.utf8)) as? [String: Any])?["output"] as? [String: String]
        #expect(output == ["word": "hello"], "the input on stdin, stdout (JSON) as the output")

        let overHTTP = try TaskAgent.http("POST", "/api/tasks/ok/run", port: port, body: #"{"wait": true}"#)
        #expect((overHTTP.json["run"] as? [String: Any])?["status"] as? String == "succeeded", "\(overHTTP.body)")

        let retried = try TaskAgent.http("GET", "/api/events?source=tasks&type=task.retrying&limit=10", port: port)
        #expect((retried.json["events"] as? [[String: Any]])?.count == 2)
        let attempts = try TaskAgent.http("GET", "/api/metrics", port: port).json["families"] as? [[String: Any]] ?? []
        let samples = attempts.first { $0["name"] as? String == "agent_task_attempts_total" }?["samples"] as? [[String: Any]] ?? []
        #expect(samples.first { ($0["labels"] as? [String: String]) == ["task": "three", "outcome": "failed"] }?["value"] as? Double == 3)
    }

    @Test func aTimeoutEndsTheRunAsTimedOutAndACancelEndsARunningOne() throws {
        let (agent, _) = try TaskAgent.agent(tasks: Self.tasks)
        defer { _ = agent.stop() }
        let started = Date()
        let slow = try Self.task(agent, ["run", "slow", "--wait"])
        #expect(slow.status == 1)
        #expect(TaskAgent.fields(slow.stdout)["status"] == "timed_out", "\(slow.stdout)")
        #expect(Date().timeIntervalSince(started) < 25, "the run waited for its command (30 s), not its timeout")

        let queued = try Self.task(agent, ["run", "long"])
        let id = queued.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let deadline = Date().addingTimeInterval(10)
        while TaskAgent.fields(try Self.task(agent, ["show", id]).stdout)["status"] != "running", Date() < deadline {
            Thread.sleep(forTimeInterval: 0.1)
        }
        let cancelled = try Self.task(agent, ["cancel", id])
        #expect(cancelled.status == 0, "\(cancelled.stderr)")
        #expect(cancelled.stdout.contains("cancelled"), "\(cancelled.stdout)")
        let shown = try Self.task(agent, ["show", id])
        #expect(TaskAgent.fields(shown.stdout)["status"] == "cancelled")
        let again = try Self.task(agent, ["cancel", id])
        #expect(again.status == 1)
        #expect(again.stderr.contains("already finished"))
        let rerun = try Self.task(agent, ["rerun", id])
        #expect(rerun.status == 0)
        let fresh = rerun.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(fresh != id)
        #expect(TaskAgent.fields(try Self.task(agent, ["show", fresh]).stdout)["rerun_of"] == id)
        _ = try Self.task(agent, ["cancel", fresh])
    }

    @Test func aRunRunningWhenTheAgentIsKilledIsInterruptedAndRetriedAtTheNextStart() throws {
        let directory = TestPaths.temporaryDirectory("task-crash")
        let (first, _) = try TaskAgent.agent(tasks: Self.tasks, directory: directory)
        let running = try Self.task(first, ["run", "once"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let queued = try Self.task(first, ["run", "ok", "--at", "1h"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let deadline = Date().addingTimeInterval(10)
        while TaskAgent.fields(try Self.task(first, ["show", running]).stdout)["status"] != "running", Date() < deadline {
            Thread.sleep(forTimeInterval: 0.1)
        }
        // Once the store's writer committed the running state, the supervisor is killed unwarned.
        #expect(TaskFrontTests.waitForCommittedRun(running, status: "running", in: directory), "\(first.transcript)")
        #expect(first.stop(signal: SIGKILL) != nil)

        let (second, _) = try TaskAgent.agent(tasks: Self.tasks, directory: directory)
        defer { _ = second.stop() }
        var fields: [String: String] = [:]
        let until = Date().addingTimeInterval(20)
        repeat {
            Thread.sleep(forTimeInterval: 0.2)
            fields = TaskAgent.fields(try Self.task(second, ["show", running]).stdout)
        } while fields["status"] != "succeeded" && Date() < until
        #expect(fields["status"] == "succeeded", "\(fields)\n\(second.transcript)")
        #expect(fields["attempt"] == "2", "the interrupted attempt is retried once, as attempt 2")
        #expect(fields["output"]?.contains(#""run":"\#(running)""#) == true, "the run id is the idempotency key: \(fields)")
        #expect(TaskAgent.fields(try Self.task(second, ["show", queued]).stdout)["status"] == "queued")
    }
}
