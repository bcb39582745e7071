import AgentTestSupport
import Foundation
import Synchronization
import Testing

/// schemathesis driving the real server with `GET /api/openapi.json` finds no server error, no
/// answer outside the document, no crash. A suite of its own, apart from the serialized
/// OpenAPITests: as their third test it began only when they were done, and the run ended with
/// it running alone.
@Suite(.ownThreads) struct OpenAPISchemathesisTests {
    /// The operations in two halves of about 30 each, driven side by side against an agent each:
    /// one schemathesis process spends most of its time waiting for answers (more so on a
    /// loaded machine), and this test was CI's longest. Each half is deterministic (its own
    /// seed and agent); together they are every operation, with the same phases and checks.
    static let halves = "^/api/(runs|workflow|schedules|tasks|memory)"

    @Test(.tags(.long), .enabled(if: OpenAPITests.hasPython("schemathesis"), "schemathesis is not installed (python3 -m pip install schemathesis; .ci/run does)"))
    func schemathesisDrivingTheServerFindsNoServerErrorAndNoAnswerOutsideTheDocument() throws {
        let agents = try [HTTPAgent(processes: OpenAPITests.agentProcesses), HTTPAgent(processes: OpenAPITests.agentProcesses)]
        for agent in agents {
            #expect(HTTPAgent.eventually { (try? agent.statusField("chat", "state")) as? String == "running" })
        }
        let work = TestPaths.temporaryDirectory("schemathesis")
        // A stream never ends by itself: schemathesis asks for the JSON answer instead (the
        // streams have tests of their own).
        try """
        import schemathesis

        @schemathesis.hook
        def before_call(ctx, case, **kwargs):
            if case.query and "follow" in case.query and str(case.query["follow"]).lower() in ("true", "1", ""):
                case.query["follow"] = "false"
        """.write(toFile: work + "/agent_hooks.py", atomically: true, encoding: .utf8)
        // POST /api/stop would stop the agent under test mid-run: it is left out, and called
        // once at the end instead. GET /readyz answers 503 by design while a process the run
        // stopped is stopped (documented; its own tests check it), which schemathesis takes
        // for a server error.
        let commands = zip(agents, [["--include-path-regex", Self.halves], ["--exclude-path-regex", Self.halves]]).map { agent, half in
            ["python3", "-m", "schemathesis.cli", "run", "http://127.0.0.1:\(agent.port)/api/openapi.json",
             "--checks", "not_a_server_error,status_code_conformance,content_type_conformance,response_schema_conformance,negative_data_rejection,unsupported_method",
             "--header", "Authorization: Bearer \(HTTPAgent.token)",
             "--exclude-path", "/api/stop", "--exclude-path", "/readyz",
             "--phases", "examples,coverage,fuzzing",
             "--max-examples", "40", "--seed", "20", "--workers", "1",
             "--generation-database", "none", "--request-timeout", "40"] + half
        }
        let runs = Mutex<[Int: (status: Int32, output: String)]>([:])
        DispatchQueue.concurrentPerform(iterations: commands.count) { index in
            let result: (Int32, String)
            do {
                let run = try runProgram("/usr/bin/env", commands[index], in: work,
                                         environment: ["SCHEMATHESIS_HOOKS": "agent_hooks", "PYTHONPATH": work, "NO_COLOR": "1"], timeout: 600)
                result = (run.status, run.stdout + "\n" + run.stderr)
            } catch {
                result = (-1, "\(error)")
            }
            runs.withLock { $0[index] = result }
        }
        for (index, agent) in agents.enumerated() {
            let run = runs.withLock { $0[index] }
            #expect(run?.status == 0, "half \(index + 1): \(run?.output ?? "no result")")
            #expect(run?.output.contains(" passed") == true, "half \(index + 1) ran nothing: \(run?.output ?? "")")
            #expect(agent.run.process.isRunning, "the agent died under schemathesis:\n\(agent.run.transcript)")

            let stop = try agent.request("POST", "/api/stop")
            #expect(stop.status == 200, "\(stop)")
            #expect(stop.json?["ok"] as? Bool == true)
            #expect(agent.run.waitForExit(timeout: 60) == 0)
        }
    }
}
