import AgentTestSupport
import Foundation
import JSONSchema
import Testing

/// The workflow definitions over HTTP (the chatbot-management spec's service): create, get,
/// update, add a step at a position, delete — each through the settings path (validated with
/// every error at its pointer and nothing written, or written keeping the file's formatting
/// and reloaded), against a real agent.
@Suite(.ownThreads, .serialized) struct WorkflowDefinitionHTTPTests {
    static let tasks = #""note": {"type": "command", "command": "echo '{\"ok\": true}'", "shell": true}"#

    static func body(_ value: JSONValue) -> String { value.serialized() }

    static func json(_ answer: HTTPProbe.Answer) -> JSONValue { (try? JSONValue.parse(Data(answer.body.utf8))) ?? .null }

    @Test func definitionsAreCreatedReadUpdatedExtendedAndDeletedThroughTheSettingsPath() throws {
        let directory = TestPaths.temporaryDirectory("workflow-definitions-http")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let agent = try WorkflowAgent.start(WorkflowAgent.settings(tasks: Self.tasks, workflows: ""), directory: directory)
        defer { _ = agent.run.stop() }
        let file = agent.run.settingsFile
        let original = try String(contentsOfFile: file, encoding: .utf8)

        // Invalid: every error at its pointer, 400, nothing written.
        let invalid: JSONValue = ["name": "support", "definition": ["steps": [
            ["id": "classify", "task": "nosuch"],
            ["id": "wait", "wait_event": ["type": "order.paid", "timeout": "soon"]],
        ]]]
        let refused = try agent.http("POST", "/api/workflows", body: Self.body(invalid))
        #expect(refused.status == 400, "\(refused.status) \(refused.body)")
        let pointers = Self.json(refused)["errors"]?.arrayValue?.compactMap { $0["pointer"]?.stringValue } ?? []
        #expect(pointers.contains("/workflows/support/steps/0/task"), "\(pointers)")
        #expect(pointers.contains { $0.hasPrefix("/workflows/support/steps/1/wait_event/timeout") }, "\(pointers)")
        // And where in the request: the first problem's member.
        let first = try #require(pointers.first)
        #expect(Self.json(refused)["pointer"]?.stringValue == "/definition" + first.dropFirst("/workflows/support".count), "\(refused.body)")
        #expect(Self.json(refused)["pointer"]?.stringValue?.hasPrefix("/definition/steps/") == true, "\(refused.body)")
        #expect(try String(contentsOfFile: file, encoding: .utf8) == original)
        #expect(try agent.http("GET", "/api/workflows/support").status == 404)

        // Created: written (the rest of the file byte for byte), reloaded, runnable.
        let created = try agent.http("POST", "/api/workflows", body: Self.body([
            "name": "support",
            "definition": ["steps": [["id": "classify", "task": "note"], ["id": "done", "set": ["vars": ["closed": true]]]]],
        ]))
        #expect(created.status == 200, "\(created.body)")
        #expect(Self.json(created)["changed"] == true && Self.json(created)["workflow"] == "support", "\(created.body)")
        let written = try String(contentsOfFile: file, encoding: .utf8)
        #expect(written.hasPrefix(#"{"enabled_modules": [], "processes": {},"#), "\(written)")
        #expect(written.contains(#""tasks": {\#(Self.tasks)},"#), "\(written)")
        let duplicate = try agent.http("POST", "/api/workflows", body: Self.body(["name": "support", "definition": ["steps": [["id": "a", "task": "note"]]]]))
        #expect(duplicate.status == 409, "\(duplicate.body)")

        let got = try agent.http("GET", "/api/workflows/support")
        #expect(got.status == 200, "\(got.body)")
        #expect(Self.json(got)["definition"]?["steps"]?.arrayValue?.count == 2, "\(got.body)")
        let version = try #require(Self.json(got)["version"]?.stringValue)
        let hash = try #require(Self.json(got)["hash"]?.stringValue)
        let ran = try agent.runAndWait("support")
        #expect(ran.run["status"] == "succeeded" && ran.steps["classify"]?["status"] == "succeeded", "\(ran)")

        // A step at a position: in the middle of the steps, validated, written, reloaded.
        let badStep = try agent.http("POST", "/api/workflows/support/steps", body: Self.body(["step": ["id": "x", "task": "nosuch"], "position": 1]))
        #expect(badStep.status == 400 && badStep.body.contains("/workflows/support/steps/1/task"), "\(badStep.status) \(badStep.body)")
        #expect(Self.json(badStep)["pointer"] == "/step/task", "\(badStep.body)")
        let farStep = try agent.http("POST", "/api/workflows/support/steps", body: Self.body(["step": ["id": "x", "task": "note"], "position": 7]))
        #expect(farStep.status == 400 && farStep.body.contains("0 to 2"), "\(farStep.status) \(farStep.body)")
        let added = try agent.http("POST", "/api/workflows/support/steps",
                                   body: Self.body(["step": ["id": "announce", "publish": ["type": "ticket.classified", "payload": ["by": "support"]]], "position": 1, "if_match": .string(hash)]))
        #expect(added.status == 200, "\(added.body)")
        let steps = Self.json(try agent.http("GET", "/api/workflows/support"))["definition"]?["steps"]?.arrayValue?.compactMap { $0["id"]?.stringValue }
        #expect(steps == ["classify", "announce", "done"], "\(String(describing: steps))")
        let stale = try agent.http("POST", "/api/workflows/support/steps", body: Self.body(["step": ["id": "late", "task": "note"], "if_match": .string(hash)]))
        #expect(stale.status == 412, "the file changed since that hash: \(stale.body)")
        let again = try agent.runAndWait("support")
        #expect(again.run["status"] == "succeeded" && again.steps["announce"]?["status"] == "succeeded", "\(again)")

        // Updated: the whole definition replaced; new runs take it.
        let updated = try agent.http("PUT", "/api/workflows/support", body: Self.body(["definition": ["steps": [["id": "only", "set": ["vars": ["v": 2]]]]]]))
        #expect(updated.status == 200, "\(updated.body)")
        let after = Self.json(try agent.http("GET", "/api/workflows/support"))
        #expect(after["version"]?.stringValue != version && after["definition"]?["steps"]?.arrayValue?.count == 1, "\(after)")
        let third = try agent.runAndWait("support")
        #expect(third.run["status"] == "succeeded" && third.steps.keys.sorted() == ["only"], "\(third)")
        let badUpdate = try agent.http("PUT", "/api/workflows/support", body: Self.body(["definition": ["steps": [["id": "only"]]]]))
        #expect(badUpdate.status == 400 && badUpdate.body.contains("/workflows/support/steps/0"), "\(badUpdate.body)")
        #expect(try agent.http("PUT", "/api/workflows/nosuch", body: Self.body(["definition": ["steps": []]])).status == 404)

        // Deleted: gone from the file and from the agent.
        let deleted = try agent.http("DELETE", "/api/workflows/support")
        #expect(deleted.status == 200, "\(deleted.body)")
        #expect(try agent.http("GET", "/api/workflows/support").status == 404)
        #expect(try agent.http("DELETE", "/api/workflows/support").status == 404)
        let listed = Self.json(try agent.http("GET", "/api/workflows"))["workflows"]?.arrayValue ?? []
        #expect(listed.isEmpty, "\(listed)")
        #expect(try JSONValue.parse(Data(try String(contentsOfFile: file, encoding: .utf8).utf8))["workflows"] == [:])

        // The OpenAPI document has the service's routes.
        let paths = Self.json(try agent.http("GET", "/api/openapi.json"))["paths"]
        for (path, method, command) in [("/api/workflows", "post", "workflow_create"), ("/api/workflows/{name}", "get", "workflow_get"),
                                        ("/api/workflows/{name}", "put", "workflow_update"), ("/api/workflows/{name}", "delete", "workflow_delete"),
                                        ("/api/workflows/{name}/steps", "post", "workflow_add_step")] {
            #expect(paths?[path]?[method]?["x-command"]?.stringValue == command, "\(method) \(path)")
        }
    }

    @Test func aWorkflowIsDefinedExtendedAndDeletedFromTheCommandLine() throws {
        let directory = TestPaths.temporaryDirectory("workflow-definitions-cli")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let agent = try WorkflowAgent.start(WorkflowAgent.settings(tasks: Self.tasks, workflows: ""), directory: directory)
        defer { _ = agent.run.stop() }
        let file = agent.run.settingsFile
        let original = try String(contentsOfFile: file, encoding: .utf8)

        let invalid = try agent.control(["define", "support", "--json", #"{"steps": [{"id": "a", "task": "nosuch"}, {"id": "a", "set": {"vars": {}}}]}"#])
        #expect(invalid.status == 2, "\(invalid.stdout)\(invalid.stderr)")
        #expect(invalid.stderr.contains("/workflows/support/steps/0/task") && invalid.stderr.contains("/workflows/support/steps/1"), "\(invalid.stderr)")
        #expect(try String(contentsOfFile: file, encoding: .utf8) == original)

        let defined = try agent.control(["define", "support", "--json", #"{"steps": [{"id": "first", "task": "note"}, {"id": "last", "set": {"vars": {"x": 1}}}]}"#])
        #expect(defined.status == 0, "\(defined.stdout)\(defined.stderr)")
        #expect(try agent.control(["define", "support", "--json", #"{"steps": []}"#]).status == 1, "a name that is taken needs --replace")
        let added = try agent.control(["add-step", "support", "--position", "1", "--json", #"{"id": "middle", "publish": {"type": "t.x"}}"#])
        #expect(added.status == 0, "\(added.stdout)\(added.stderr)")
        let ran = try agent.runAndWait("support")
        #expect(ran.run["status"] == "succeeded" && ran.steps.keys.sorted() == ["first", "last", "middle"], "\(ran)")
        let steps = try JSONValue.parse(Data(try String(contentsOfFile: file, encoding: .utf8).utf8))["workflows"]?["support"]?["steps"]?.arrayValue?.compactMap { $0["id"]?.stringValue }
        #expect(steps == ["first", "middle", "last"], "\(String(describing: steps))")
        let replaced = try agent.control(["define", "support", "--replace", "--json", #"{"steps": [{"id": "only", "task": "note"}]}"#])
        #expect(replaced.status == 0, "\(replaced.stderr)")
        #expect(try agent.runAndWait("support").steps.keys.sorted() == ["only"])
        let deleted = try agent.control(["delete", "support"])
        #expect(deleted.status == 0, "\(deleted.stderr)")
        let missing = try agent.control(["delete", "support"])
        #expect(missing.status == 1 && missing.stderr.contains("no workflow named \"support\""), "\(missing.stderr)")
        let help = try runProgram("agent-control", ["workflow", "add-step", "--help"])
        #expect(help.stdout.contains("--position") && help.stdout.contains("formatting"), "\(help.stdout)")
    }
}
