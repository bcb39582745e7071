@testable import AgentCommands
import AgentTestSupport
import Foundation
import Testing
@testable import AgentHTTP

/// `GET /api/openapi.json` matches the server: it is valid OpenAPI 3.1 (openapi-spec-validator)
/// and it has every command of the catalog (OpenAPISchemathesisTests drives the real server
/// with it).
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
}
