import AgentTestSupport
import Foundation
import Testing

/// The answers of the HTTP front agree with the OpenAPI document of their route. Every answer
/// the tests' HTTP clients receive is checked (``OpenAPIAgreement``); these tests drive the
/// answers that disagreed: the executors' figures (`assignment` of `status` and
/// `diagnostics`), a decision on a finished workflow run (`code: "finished"`), the health and
/// metrics routes without credentials (401) and a login from a form (303).
@Suite(.ownThreads) struct OpenAPIAgreementTests {
    @Test func theCheckerFindsAnAnswerOutsideItsSchemaOrStatus() {
        // The tests' HTTP clients, in every test target, find it (AgentTestSupport cannot import it).
        #expect(HTTPAnswerCheck.checker.map(ObjectIdentifier.init) == ObjectIdentifier(OpenAPIAgreement.self))
        #expect(!OpenAPIAgreement.problems(method: "GET", target: "/api/status", status: 200, contentType: "application/json", body: #"{"ok": "yes"}"#).isEmpty)
        #expect(!OpenAPIAgreement.problems(method: "POST", target: "/api/workflow-runs/r1/steps/s/approve", status: 409, contentType: "application/json",
                                           body: #"{"ok": false, "code": "finished", "error": "the run r1 has finished"}"#).isEmpty)
        #expect(!OpenAPIAgreement.problems(method: "GET", target: "/api/status?x=1", status: 418, contentType: "application/json", body: "{}").isEmpty)
        // Not the API's: a dashboard page.
        #expect(OpenAPIAgreement.problems(method: "GET", target: "/", status: 200, contentType: "text/html", body: "<html>").isEmpty)
    }

    @Test func executorFiguresAndADecisionOnAFinishedRunAgreeWithTheDocument() throws {
        let workflows = #""workflows": {"quick": {"steps": [{"id": "s", "set": {"vars": {"x": 1}}}]}},"#
        let (agent, port) = try TaskAgent.agent(
            tasks: #""work": {"type": "faults.fault_task", "max_concurrent": 2}"#, store: workflows, modules: #"["faults"]"#,
            processes: #"{"pool": {"type": "executor", "max_concurrent": 1, "tasks": {"work": {}}}}"#)
        defer { _ = agent.stop() }
        for path in ["/api/diagnostics", "/api/status", "/api/executors"] {
            let answer = try TaskAgent.http("GET", path, port: port)
            #expect(answer.status == 200, "\(path): \(answer.body)")
            #expect(answer.json["assignment"] != nil || answer.json["statistics"] != nil, "\(path): \(answer.body)")
            let problems = OpenAPIAgreement.problems(method: "GET", target: path, status: answer.status,
                                                     contentType: answer.headers["content-type"], body: answer.body)
            #expect(problems.isEmpty, "\(problems)")
        }
        let run = try TaskAgent.http("POST", "/api/workflows/quick/run", port: port, body: #"{"wait": true}"#)
        #expect(run.status == 200, "\(run.body)")
        let id = try #require((run.json["run"] as? [String: Any])?["id"] as? String)
        let decision = try TaskAgent.http("POST", "/api/workflow-runs/\(id)/steps/s/approve", port: port, body: "{}")
        #expect(decision.status == 409, "\(decision.body)")
        #expect(decision.json["code"] as? String == "conflict", "\(decision.body)")
        #expect((decision.json["error"] as? String)?.contains("has finished") == true, "\(decision.body)")
    }

    @Test func healthAndMetricsWithoutCredentialsAndAFormLoginAreDocumented() {
        #expect(OpenAPIAgreement.problems(method: "GET", target: "/readyz", status: 401, contentType: "application/json",
                                          body: #"{"ok": false, "code": "unauthorized", "error": "credentials required"}"#).isEmpty)
        #expect(OpenAPIAgreement.problems(method: "GET", target: "/metrics", status: 401, contentType: "application/json",
                                          body: #"{"ok": false, "code": "unauthorized", "error": "credentials required"}"#).isEmpty)
        #expect(OpenAPIAgreement.problems(method: "POST", target: "/api/login", status: 303, contentType: nil, body: "").isEmpty)
    }
}
