@testable import AgentCommands
import AgentTestSupport
import Foundation
import Synchronization
import Testing
@testable import AgentHTTP

/// `GET /api/openapi.json` matches the server: it is valid OpenAPI 3.1 (openapi-spec-validator),
/// it has every command of the catalog, and schemathesis driving the real server with it finds
/// no server error, no answer outside the document, no crash.
@Suite(.ownThreads, .serialized) struct OpenAPITests {
    /// Whether `python3` can import `module` (the tools come from PyPI; .ci/run installs them).
    static func hasPython(_ module: String) -> Bool {
        (try? runProgram("/usr/bin/env", ["python3", "-c", "import \(module)"]).status) == 0
    }

    static let agentProcesses = """
    {"trades": {"type": "trade_feed", "pairs": ["X/Y"], "interval": 0.05},
     "busy": {"type": "trade_frequency", "window": 30, "threshold": 5},
     "chat": {"type": "chatbot", "logic_adapters": ["features", "status", "latest_value"]}}
    """

    @Test func theDocumentHasEveryCommandAndEveryOtherRoute() throws {
        let agent = try HTTPAgent(processes: Self.agentProcesses)
        let reply = try agent.request("GET", "/api/openapi.json")
        #expect(reply.status == 200)
        let document = try #require(reply.json)
        #expect(document["openapi"] as? String == "3.1.0")
        let paths = try #require(document["paths"] as? [String: [String: Any]])
        for command in CommandCatalog.all {
            let operation = paths[command.path]?[command.method.lowercased()] as? [String: Any]
            #expect(operation?["x-command"] as? String == command.name, "\(command.method) \(command.path) is missing")
        }
        for route in HTTPFront.documentedRoutes {
            #expect(paths[route.path]?[route.method.lowercased()] != nil, "\(route.method) \(route.path) is missing")
            // And the server has it.
            if route.method == "GET" {
                #expect(try agent.request("GET", route.path).status != 404, "\(route.path)")
            }
        }
        // Path fields in the path, GET fields in the query, the others in a JSON body.
        let stop = paths["/api/processes/{name}/stop"]?["post"] as? [String: Any]
        let stopParameters = stop?["parameters"] as? [[String: Any]] ?? []
        #expect(stopParameters.map { $0["in"] as? String } == ["path"])
        #expect(stop?["requestBody"] == nil)
        let events = paths["/api/events"]?["get"] as? [String: Any]
        let eventParameters = (events?["parameters"] as? [[String: Any]] ?? []).compactMap { $0["name"] as? String }
        #expect(Set(eventParameters) == ["type", "source", "run", "since", "after", "limit", "follow"])
        let eventContent = ((events?["responses"] as? [String: Any])?["200"] as? [String: Any])?["content"] as? [String: Any]
        #expect(eventContent?["text/event-stream"] != nil)
        let chat = paths["/api/chat"]?["post"] as? [String: Any]
        #expect((chat?["requestBody"] as? [String: Any])?["required"] as? Bool == true)
    }

    @Test(.enabled(if: hasPython("openapi_spec_validator"), "openapi-spec-validator is not installed (python3 -m pip install openapi-spec-validator; .ci/run does)"))
    func theDocumentIsValidOpenAPI31() throws {
        let agent = try HTTPAgent(processes: Self.agentProcesses)
        let reply = try agent.request("GET", "/api/openapi.json")
        let file = TestPaths.temporaryDirectory("openapi") + "/openapi.json"
        try reply.body.write(toFile: file, atomically: true, encoding: .utf8)
        let check = try runProgram("/usr/bin/env", ["python3", "-c", """
            import json, sys
            from openapi_spec_validator import validate
            from openapi_spec_validator.validation import OpenAPIV31SpecValidator
            validate(json.load(open(sys.argv[1])), cls=OpenAPIV31SpecValidator)
            print("valid")
            """, file])
        #expect(check.status == 0, "\(check.stdout)\(check.stderr)")
        #expect(check.stdout.contains("valid"))
    }

    /// The operations in two halves of about 30 each, driven side by side against an agent each:
    /// one schemathesis process spends most of its time waiting for answers (more so on a
    /// loaded machine), and this test was CI's longest. Each half is deterministic (its own
    /// seed and agent); together they are every operation, with the same phases and checks.
    static let halves = "^/api/(runs|workflow|schedules|tasks|memory)"

    @Test(.enabled(if: hasPython("schemathesis"), "schemathesis is not installed (python3 -m pip install schemathesis; .ci/run does)"))
    func schemathesisDrivingTheServerFindsNoServerErrorAndNoAnswerOutsideTheDocument() throws {
        let agents = try [HTTPAgent(processes: Self.agentProcesses), HTTPAgent(processes: Self.agentProcesses)]
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
