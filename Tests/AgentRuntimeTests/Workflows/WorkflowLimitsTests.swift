@testable import AgentBase
import AgentTestSupport
import Foundation
import JSONSchema
import Testing
@testable import AgentRuntime

/// A workflow's size and fan-out are bounded when the settings are validated
/// (`"workflow_limits"`): a 10,000-branch workflow validated before, and its runs held the
/// loop for seconds.
@Suite(.ownThreads) struct WorkflowLimitsTests {
    /// A parallel step of `count` branches of one `set` step each.
    static func parallel(_ id: String, branches count: Int) -> String {
        let branches = (0..<count).map { #"[{"id": "\#(id)\#($0)", "set": {"vars": {"x": \#($0)}}}]"# }
        return #"{"id": "\#(id)", "parallel": {"branches": [\#(branches.joined(separator: ", "))]}}"#
    }

    /// `count` set steps.
    static func steps(_ count: Int) -> String {
        (0..<count).map { #"{"id": "s\#($0)", "set": {"vars": {"x": \#($0)}}}"# }.joined(separator: ", ")
    }

    @Test func validateSettingsRefusesAWorkflowBeyondTheLimitsAtItsPointer() throws {
        let directory = TestPaths.temporaryDirectory("workflow-limits")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let file = directory + "/settings.json"
        try #"""
            {"enabled_modules": [], "processes": {},
             "workflows": {"wide": {"steps": [\#(Self.parallel("p", branches: 10_000))]},
                           "long": {"steps": [\#(Self.steps(1_001))]},
                           "fine": {"steps": [\#(Self.parallel("q", branches: 100)), \#(Self.steps(899))]}}}
            """#.write(toFile: file, atomically: true, encoding: .utf8)
        let result = try runProgram("validate-settings", ["--settings", file, "--json", "--no-build"])
        #expect(result.status == 2, "\(result.stderr)")
        let report = try JSONValue.parse(result.stdout)
        let errors = report["errors"]?.arrayValue ?? []
        #expect(errors.count == 2, "\(errors)")
        let wide = try #require(errors.first { $0["pointer"]?.stringValue == "/workflows/wide/steps/0/parallel/branches" }, "\(errors)")
        #expect(wide["message"]?.stringValue?.contains("has 10000 branches; at most 100 are allowed") == true, "\(wide)")
        #expect(wide["message"]?.stringValue?.contains("/workflow_limits/branches (at most 10000)") == true, "\(wide)")
        #expect(wide["file"]?.stringValue == file)
        let long = try #require(errors.first { $0["pointer"]?.stringValue == "/workflows/long/steps" }, "\(errors)")
        #expect(long["message"]?.stringValue?.contains("more than 1000 steps") == true, "\(long)")
    }

    /// A literal task input is a run's input as it is: one over 1 MiB is refused at its pointer
    /// when the settings are validated, not when the step runs.
    @Test func aLiteralStepInputOverOneMiBIsASettingsErrorAtItsPointer() throws {
        let items = Array(repeating: "\"" + String(repeating: "x", count: 1000) + "\"", count: 1100).joined(separator: ",")
        let settings = AgentSettings(json: try JSONValue.parse(#"""
            {"enabled_modules": [], "processes": {}, "tasks": {"t": {"type": "command", "command": ["/bin/true"]}},
             "workflows": {"big": {"steps": [{"id": "one", "task": "t", "input": {"items": [\#(items)]}}]},
                           "small": {"steps": [{"id": "one", "task": "t", "input": {"items": ["x"]}}]}}}
            """#), file: "settings.json")
        var validator = SettingsValidator()
        let issues = validator.check(settings, modules: [], manifests: [:]).generalIssues
        let problem = issues.first { $0.pointer == "/workflows/big/steps/0/input" }
        #expect(problem?.message.contains("more than 1048576 bytes of JSON") == true, "\(issues.map(\.pointer))")
        #expect(!issues.contains { $0.pointer.hasPrefix("/workflows/small") }, "\(issues.map(\.pointer))")
    }

    @Test func theLimitsAreSettings() throws {
        func issues(_ limits: String, branches: Int, steps: Int) throws -> [SettingsIssue] {
            let json = try JSONValue.parse(#"""
                {"enabled_modules": [], "processes": {}, \#(limits)
                 "workflows": {"w": {"steps": [\#(Self.parallel("p", branches: branches)), \#(Self.steps(steps))]}}}
                """#)
            return AgentSettings(json: json, file: "settings.json").hostIssues
        }
        #expect(try issues(#""workflow_limits": {"branches": 3, "steps": 10},"#, branches: 3, steps: 6).isEmpty)
        let wide = try issues(#""workflow_limits": {"branches": 3, "steps": 10},"#, branches: 4, steps: 1)
        #expect(wide.map(\.pointer) == ["/workflows/w/steps/0/parallel/branches"], "\(wide)")
        let long = try issues(#""workflow_limits": {"branches": 3, "steps": 10},"#, branches: 3, steps: 7)
        #expect(long.map(\.pointer) == ["/workflows/w/steps"], "\(long)")
        let bad = try issues(#""workflow_limits": {"branches": 0, "steps": 1e9},"#, branches: 1, steps: 1)
        #expect(Set(bad.map(\.pointer)) == ["/workflow_limits/branches", "/workflow_limits/steps"], "\(bad)")
    }
}
