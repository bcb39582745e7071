import AgentTestSupport
@testable import AgentWork
import Foundation
import JSONSchema
import Testing
@testable import AgentCore

/// `{{input}}` and `{{input.FIELD}}` in a command task's arguments: replaced by the run's
/// input before the program starts (real programs), checked against the task's input schema
/// when the settings are read.
@Suite(.ownThreads) struct InputReferenceTests {
    typealias Harness = CommandRunnerHarness

    static let input: JSONValue = ["name": "a b; rm -rf /tmp/x", "count": 3, "tags": ["x", "y"], "place": ["city": "Oslo"], "none": nil]

    @Test func fieldsOfTheInputBecomeArgumentsStringsAsTheyAreOtherValuesAsJSON() throws {
        let harness = Harness("references")
        let task = Harness.task(["/usr/bin/printf", "%s|", "{{input.name}}", "{{ input.count }}", "{{input.tags}}", "--city={{input.place.city}}",
                                 "{{input.tags.1}}", "{{input.none}}", "{{other}}"])
        let outcome = try #require(harness.run(task, input: Self.input))
        #expect(outcome.status == .succeeded, "\(outcome)")
        #expect(outcome.output == .string(#"a b; rm -rf /tmp/x|3|["x","y"]|--city=Oslo|y|null|{{other}}|"#))
    }

    /// Found by scripts/fuzz.sh (FuzzReferences): `Int("+1")` is 1, so `{{input.tags.+1}}`
    /// and `{{input.tags.-0}}` picked items, against the rule (a JSON pointer's index).
    @Test func anItemIsPickedByDigitsAsInAJSONPointerOnly() throws {
        let input: JSONValue = ["tags": ["x", "y"]]
        for field in ["+1", "-0", "01", " 1", "2"] {
            let result = InputReferences.substitute("{{input.tags.\(field)}}", index: 0, input: input, quoted: false)
            guard case .failure(let missing) = result else {
                Issue.record("{{input.tags.\(field)}} gave \(result)")
                continue
            }
            #expect(missing.message.contains("has no \"\(field)\" in /tags"), "\(missing.message)")
        }
        #expect(try InputReferences.substitute("{{input.tags.1}}", index: 0, input: input, quoted: false).get() == "y")
    }

    @Test func theWholeInputIsItsJSON() throws {
        let harness = Harness("whole")
        let outcome = try #require(harness.run(Harness.task(["/usr/bin/printf", "%s", "{{input}}"]), input: ["a": 1]))
        #expect(outcome.output == ["a": 1])
    }

    @Test func aFieldTheInputLacksFailsTheRunSayingWhichAndStartsNothing() throws {
        let harness = Harness("missing")
        let marker = harness.directory + "/started"
        let task = Harness.task(["/bin/sh", "-c", "touch \(marker)", "{{input.place.street}}"])
        let outcome = try #require(harness.run(task, input: Self.input))
        #expect(outcome.status == .failed)
        #expect(outcome.error?.contains("argument 3 refers to {{input.place.street}}, but the run's input has no \"street\" in /place") == true,
                "\(outcome)")
        #expect(!FileManager.default.fileExists(atPath: marker))
        let top = try #require(harness.run(Harness.task(["/bin/echo", "{{input.path}}"]), input: .null))
        #expect(top.error?.contains("has no \"path\" at its top level") == true, "\(top)")
    }

    @Test func inAShellLineEachValueIsOneQuotedWordTheShellDoesNotInterpret() throws {
        let harness = Harness("shell")
        let marker = harness.directory + "/pwned"
        let input: JSONValue = ["name": .string("$(touch \(marker)); it's `here` * \"quoted\""), "n": 2]
        let task = Harness.task([#"printf '%s|' {{input.name}} {{input.n}}"#], shell: true)
        let outcome = try #require(harness.run(task, input: input))
        #expect(outcome.status == .succeeded, "\(outcome)")
        #expect(outcome.output == .string("$(touch \(marker)); it's `here` * \"quoted\"|2|"))
        #expect(!FileManager.default.fileExists(atPath: marker))
    }

    @Test func aReferenceToAFieldTheInputSchemaDoesNotDeclareIsASettingsErrorAtItsArgument() throws {
        let settings = try TaskSettingsRead(#"""
            {"good": {"type": "command", "command": ["/bin/echo", "{{input.path}}", "--n={{input.opts.count}}", "{{input}}", "{{input.list.0}}"],
                      "input": {"type": "object", "properties": {"path": {"type": "string"}, "list": {"type": "array", "items": {"type": "object"}},
                                                                 "opts": {"type": "object", "properties": {"count": {"type": "integer"}}}}}},
             "typo": {"type": "command", "command": ["/bin/echo", "{{input.pth}}"], "input": {"type": "object", "properties": {"path": {"type": "string"}}}},
             "inner": {"type": "command", "command": ["/bin/echo", "x", "{{input.opts.size}}"],
                       "input": {"properties": {"opts": {"properties": {"count": {}}}}}},
             "line": {"type": "command", "shell": true, "command": "echo {{input.nope}}", "input": {"properties": {"path": {}}}},
             "empty": {"type": "command", "command": ["/bin/echo", "{{input.}}"]},
             "free": {"type": "command", "command": ["/bin/echo", "{{input.anything.at.all}}"]}}
            """#)
        let found = settings.messages
        #expect(found["/tasks/typo/command/1"]?.contains("{{input.pth}} refers to \"pth\", which the task's \"input\" schema does not declare; did you mean \"path\"?") == true,
                "\(found)")
        #expect(found["/tasks/inner/command/2"]?.contains("\"size\"") == true, "\(found)")
        #expect(found["/tasks/inner/command/2"]?.contains("in \"opts\"") == true, "\(found)")
        #expect(found["/tasks/line/command"]?.contains("{{input.nope}}") == true, "\(found)")
        #expect(found["/tasks/empty/command/1"]?.contains("empty field name") == true, "\(found)")
        #expect(Set(found.keys) == ["/tasks/typo/command/1", "/tasks/inner/command/2", "/tasks/line/command", "/tasks/empty/command/1"], "\(found)")
        #expect(Set(settings.tasks.map(\.name)) == ["good", "free"])
    }
}
