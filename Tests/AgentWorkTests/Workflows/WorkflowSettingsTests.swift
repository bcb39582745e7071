import AgentTestSupport
@testable import AgentWork
import Foundation
import JSONSchema
import Testing

/// `"workflows"` in the settings: every problem reported at once at its JSON pointer, by
/// `validate-settings` as a user runs it, before anything runs.
@Suite(.ownThreads) struct WorkflowSettingsTests {
    @Test func everyProblemOfTheStepsIsReportedAtItsPointer() throws {
        let directory = TestPaths.temporaryDirectory("workflow-settings")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let file = directory + "/settings.json"
        try #"""
            {"enabled_modules": [], "processes": {"bot": {"type": "chatbot", "logic_adapters": ["status"]}},
             "http": {"listen": "127.0.0.1:0", "tokens": [{"token": "${env:HOME}", "name": "ops"}], "users": {}},
             "tasks": {"check": {"type": "command", "command": ["/bin/true"],
                                 "input": {"type": "object", "properties": {"order": {"type": "integer"}}, "additionalProperties": false}}},
             "workflows": {
               "bad": {"input": {"type": "object", "properties": {"order": {"type": "integer"}, "amount": {"type": "number"}}},
                       "steps": [
                 {"id": "a", "tsk": "check"},
                 {"id": "b", "task": "chek"},
                 {"id": "c", "task": "check", "input": {"order": "seven"}},
                 {"id": "d", "task": "check", "input": {"order": "${input:/ordr}"}},
                 {"id": "e", "set": {"vars": {"x": "${steps:later}"}}},
                 {"id": "b", "set": {"vars": {"y": 1}}},
                 {"id": "f", "chat": {"text": "hi", "adapter": "statuss"}},
                 {"id": "g", "set": {"vars": {"z": "${vars:/nothing}"}}},
                 {"id": "h", "parallel": {"branches": [[{"id": "p1", "set": {"vars": {"q": 1}}}],
                                                       [{"id": "p2", "set": {"vars": {"r": "${steps:p1}"}}}]]}},
                 {"id": "i", "wait_event": {"type": "x", "timeout": 5, "on_timeout": {"goto": "nowhere"}}},
                 {"id": "j", "approval": {"approvers": ["mallory"], "prompt": "ok?"}},
                 {"id": "k", "condition": {"then": []}},
                 {"id": "later", "publish": {"type": "done", "payload": "${oops:1}"}},
                 {"id": "spin", "wait_event": {"type": "x", "timeout": 1e-300, "on_timeout": {"goto": "spin"}}}
               ]},
               "good": {"input": {"type": "object", "properties": {"order": {"type": "integer"}}},
                        "steps": [{"id": "one", "task": "check", "input": {"order": "${input:/order}"}},
                                  {"id": "two", "set": {"vars": {"seen": "${steps:one}"}}},
                                  {"id": "three", "condition": {"when": {"required": ["seen"]}, "then": [{"id": "four", "publish": {"type": "t", "payload": "${vars:/seen}"}}]}},
                                  {"id": "five", "chat": {"text": "status ${steps:four}", "adapter": "status"}},
                                  {"id": "six", "approval": {"approvers": ["ops", "admin"], "prompt": "go?"}}]}}}
            """#.write(toFile: file, atomically: true, encoding: .utf8)
        let result = try runProgram("validate-settings", ["--settings", file, "--no-build", "--json"])
        #expect(result.status == 2, "\(result.stdout)\(result.stderr)")
        let report = try JSONValue.parse(Data(result.stdout.utf8))
        var found: [String: String] = [:]
        for error in report["errors"]?.arrayValue ?? [] {
            found[error["pointer"]?.stringValue ?? "?", default: ""] += error["message"]?.stringValue ?? ""
        }
        let steps = "/workflows/bad/steps"
        #expect(found[steps + "/0"]?.contains("unknown step kind \"tsk\"; did you mean \"task\"") == true, "\(found)")
        #expect(found[steps + "/1/task"]?.contains("unknown task \"chek\"; did you mean \"check\"") == true, "\(found)")
        #expect(found[steps + "/2/input/order"]?.contains("input schema of task \"check\"") == true, "\(found)")
        #expect(found[steps + "/3/input/order"]?.contains("\"ordr\", which the workflow's \"input\" schema does not declare") == true, "\(found)")
        #expect(found[steps + "/4/set/vars/x"]?.contains("\"later\", which is not a step that comes earlier") == true, "\(found)")
        #expect(found[steps + "/5/id"]?.contains("used twice") == true, "\(found)")
        #expect(found[steps + "/6/chat/adapter"]?.contains("unknown logic adapter \"statuss\"") == true, "\(found)")
        #expect(found[steps + "/7/set/vars/z"]?.contains("no earlier set step sets") == true, "\(found)")
        #expect(found[steps + "/8/parallel/branches/1/0/set/vars/r"]?.contains("\"p1\", which is not a step that comes earlier") == true, "\(found)")
        #expect(found[steps + "/9/wait_event/on_timeout/goto"]?.contains("not a top-level step") == true, "\(found)")
        #expect(found[steps + "/10/approval/approvers/0"]?.contains("unknown approver \"mallory\"") == true, "\(found)")
        #expect(found[steps + "/11/condition"]?.contains("needs \"when\"") == true, "\(found)")
        #expect(found[steps + "/12/publish/payload"]?.contains("unknown reference \"oops\"") == true, "\(found)")
        // A wait that times out to itself repeats at its timeout: at least the shortest period.
        #expect(found[steps + "/13/wait_event/timeout"]?.contains("a number from 0.1 to 86400") == true, "\(found)")
        #expect(found.keys.filter { $0.hasPrefix("/workflows/good") }.isEmpty, "\(found)")
    }

    @Test func oneResolverForEveryReference() throws {
        let values = WorkflowReferences.Values(input: ["order": 7, "who": ["name": "Ada"]], outputs: ["check": ["amount": 120.5, "ok": true]],
                                               variables: ["tier": "gold"])
        let template: JSONValue = ["whole": "${steps:check/amount}", "flag": "${steps:check/ok}", "text": "order ${input:/order} for ${input:/who/name}",
                                   "object": "${input:/who}", "nested": ["${vars:/tier}", "${env:HOME}"], "all": "${steps:check}"]
        let resolved = try WorkflowReferences.resolve(template, with: values).get()
        #expect(resolved["whole"] == .number(JSONNumber(120.5)))
        #expect(resolved["flag"] == true)
        #expect(resolved["text"] == "order 7 for Ada")
        #expect(resolved["object"] == ["name": "Ada"])
        #expect(resolved["nested"] == ["gold", "${env:HOME}"])
        #expect(resolved["all"] == ["amount": 120.5, "ok": true])
        let missing = WorkflowReferences.resolve("${steps:nope}", with: values)
        guard case .failure(let problem) = missing else { Issue.record("a missing step resolved"); return }
        #expect(problem.message.contains("\"nope\" has no output"))
    }

    /// A `/` followed by a combining mark is one `Character`: a field name beginning with one
    /// was taken for a pointer without its `/`.
    @Test func aPointerToAFieldBeginningWithACombiningMarkResolves() throws {
        let values = WorkflowReferences.Values(input: ["\u{301}x": 7], outputs: [:], variables: [:])
        #expect(WorkflowReferences.references(in: "${input:/\u{301}x}").problems.isEmpty)
        #expect(try WorkflowReferences.resolve("${input:/\u{301}x}", with: values).get() == 7)
    }
}
