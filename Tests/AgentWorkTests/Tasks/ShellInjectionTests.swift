import AgentTestSupport
@testable import AgentWork
import Foundation
import JSONSchema
import Testing

/// `"shell": true` lines and the run's input: a reference is refused where its value would
/// not be one word (inside quotes, inside a word, in a here-document, in backquotes), the
/// input's fields are `INPUT_*` variables a script quotes itself, and commands and workers do
/// not get the agent's secrets.
@Suite(.ownThreads) struct ShellInjectionTests {
    typealias Harness = CommandRunnerHarness

    @Test func aReferenceInsideQuotesOrInsideAWordIsASettingsErrorAtTheShellLine() throws {
        let settings = try TaskSettingsRead(#"""
            {"single": {"type": "command", "shell": true, "command": "echo '{{input.a}}'"},
             "double": {"type": "command", "shell": true, "command": "echo \"{{input.a}}\""},
             "word": {"type": "command", "shell": true, "command": "echo x{{input.a}}"},
             "dollar": {"type": "command", "shell": true, "command": "echo ${{input.a}}"},
             "escaped": {"type": "command", "shell": true, "command": "echo \\{{input.a}}"},
             "assigned": {"type": "command", "shell": true, "command": "A={{input.a}} env"},
             "backquoted": {"type": "command", "shell": true, "command": "echo `echo {{input.a}}`"},
             "heredoc": {"type": "command", "shell": true, "command": "cat <<EOF\n{{input.a}}\nEOF"},
             "array": {"type": "command", "shell": true, "command": ["printf '%s' \"x{{ input.a.b }}\""]},
             "whole": {"type": "command", "shell": true, "command": "echo '{{input}}'"},
             "good": {"type": "command", "shell": true,
                      "command": "printf '%s|' {{input.a}} \"$INPUT_A\";echo {{input.b}}|cat>{{input.c}} 2>{{input.d}} <<<{{input.e}} $(echo {{input.f}})\necho {{input.g}}"},
             "argv": {"type": "command", "command": ["/bin/echo", "'{{input.a}}'", "x{{input.a}}"]}}
            """#)
        let found = settings.messages
        let places = [
            "/tasks/single/command": "inside single quotes", "/tasks/double/command": "inside double quotes",
            "/tasks/word/command": "inside a word (after \"x\")", "/tasks/dollar/command": "inside a word (after \"$\")",
            "/tasks/escaped/command": "inside a word (after \"\\\")", "/tasks/assigned/command": "inside a word (after \"=\")",
            "/tasks/backquoted/command": "inside backquotes", "/tasks/heredoc/command": "in a here-document",
            "/tasks/array/command/0": "inside double quotes", "/tasks/whole/command": "inside single quotes",
        ]
        #expect(Set(found.keys) == Set(places.keys), "\(found)")
        for (pointer, place) in places {
            #expect(found[pointer]?.contains(place) == true, "\(pointer): \(found[pointer] ?? "no error")")
        }
        #expect(found["/tasks/single/command"]?.contains("{{input.a}} at character 6 of the shell line is inside single quotes") == true)
        #expect(found["/tasks/single/command"]?.contains(#"write the reference as a word of its own, e.g. echo {{input.a}}, or use the variable "$INPUT_A""#) == true,
                "\(found["/tasks/single/command"] ?? "")")
        #expect(found["/tasks/whole/command"]?.contains("read the input from stdin") == true)
        #expect(Set(settings.tasks.map(\.name)) == ["good", "argv"])
    }

    @Test func aReferenceInTheScriptOfAShellTheTaskRunsIsASettingsError() throws {
        let settings = try TaskSettingsRead(#"""
            {"sh": {"type": "command", "command": ["/bin/sh", "-c", "echo {{input.a}}"]},
             "bash": {"type": "command", "command": ["bash", "-eu", "-o", "pipefail", "-c", "x; echo {{input.a}}", "job"]},
             "flags": {"type": "command", "command": ["/usr/bin/dash", "-ec", "echo '{{input.a}}'"]},
             "positional": {"type": "command", "command": ["/bin/sh", "-c", "echo \"$1\"", "job", "{{input.a}}"]},
             "script": {"type": "command", "command": ["/bin/sh", "job.sh", "{{input.a}}"]},
             "other": {"type": "command", "command": ["/usr/bin/python3", "-c", "import sys", "{{input.a}}"]},
             "applet": {"type": "command", "command": ["busybox", "wget", "-c", "{{input.a}}"]},
             "busybox": {"type": "command", "command": ["/bin/busybox", "sh", "-c", "echo {{input.a}}"]}}
            """#)
        let found = settings.messages
        #expect(Set(found.keys) == ["/tasks/sh/command/2", "/tasks/bash/command/5", "/tasks/flags/command/2", "/tasks/busybox/command/3"], "\(found)")
        #expect(found["/tasks/sh/command/2"]?.contains(#"{{input.a}} is in the script that /bin/sh -c runs, where its value would be read as shell code"#) == true,
                "\(found)")
        #expect(found["/tasks/sh/command/2"]?.contains(#"pass the value as a positional parameter (["/bin/sh", "-c", "echo \"$1\"", "job", "{{input.a}}"]), or use the variable "$INPUT_A""#) == true,
                "\(found)")
        #expect(Set(settings.tasks.map(\.name)) == ["positional", "script", "other", "applet"])
    }

    /// Found with scripts/fuzz.sh's FuzzReferences: the check read the quotes of a comment, so
    /// after `# '` it took the next line's quoted text for plain words, where dash ran the
    /// value (`echo x # '` then `' {{input.a}} '` ran `; touch F;`); and it let a reference
    /// stand in a comment, which a value with a newline ends. And in its long run: a `"` inside
    /// `$(…)` within double quotes was taken for the closing quote (`echo "$(echo " {{input.a}} ")"`
    /// ran a `$(…)` of the value).
    @Test func aReferenceInOrAfterACommentIsJudgedAsDashReadsTheLine() throws {
        let settings = try TaskSettingsRead(#"""
            {"after": {"type": "command", "shell": true, "command": "echo x # '\n' {{input.a}} '"},
             "in": {"type": "command", "shell": true, "command": "echo x # {{input.a}}"},
             "escaped": {"type": "command", "shell": true, "command": "echo \\ #'\n {{input.a}} '"},
             "heredoc": {"type": "command", "shell": true, "command": "cat <<EOF # note\n{{input.a}}\nEOF"},
             "nested": {"type": "command", "shell": true, "command": "echo \"$(echo \" {{input.a}} \")\""},
             "parameter": {"type": "command", "shell": true, "command": "echo \"${x:-\" {{input.a}} \"}\""},
             "inner": {"type": "command", "shell": true, "command": "x=$(cat <<E\n{{input.a}}\nE\n)"},
             "good": {"type": "command", "shell": true, "command": "echo a#b \"#\" {{input.a}} # it's\necho \"$(date \"+%s\")\" {{input.a}}"}}
            """#)
        let found = settings.messages
        #expect(Set(found.keys) == ["/tasks/after/command", "/tasks/in/command", "/tasks/escaped/command", "/tasks/heredoc/command",
                                    "/tasks/nested/command", "/tasks/parameter/command", "/tasks/inner/command"], "\(found)")
        // A `"` inside a `$(…)` or `${…}` within double quotes opens a quote of its own.
        #expect(found["/tasks/nested/command"]?.contains("inside double quotes") == true, "\(found)")
        #expect(found["/tasks/parameter/command"]?.contains("inside double quotes") == true, "\(found)")
        #expect(found["/tasks/inner/command"]?.contains("in a here-document") == true, "\(found)")
        #expect(found["/tasks/after/command"]?.contains("inside single quotes") == true, "\(found)")
        #expect(found["/tasks/in/command"]?.contains("in a comment") == true, "\(found)")
        #expect(found["/tasks/escaped/command"]?.contains("inside single quotes") == true, "\(found)")
        #expect(found["/tasks/heredoc/command"]?.contains("in a here-document") == true, "\(found)")
        #expect(settings.tasks.map(\.name) == ["good"])

        let harness = Harness("comment")
        let marker = harness.directory + "/pwned"
        // A comment's reference is no safer: a value with a newline ends the comment.
        let lines = [("echo x # '\n' {{input.a}} '", "; touch \(marker); "), ("echo x # {{input.a}}", "\ntouch \(marker) #"),
                     ("echo \"$(echo \" {{input.a}} \")\"", "$(touch \(marker))")]
        for (line, value) in lines {
            let outcome = try #require(harness.run(Harness.task([line], shell: true), input: ["a": .string(value)]))
            #expect(outcome.status == .failed, "\(line): \(outcome)")
        }
        #expect(!FileManager.default.fileExists(atPath: marker))
    }

    /// Found with scripts/fuzz.sh's FuzzReferences long run: the check read the quote in a
    /// reference's own field name (`{{input.x'}}`), which the value replaces before dash reads
    /// the line, so the quotes after it were paired the other way round. And it read the line
    /// as `Character`s where dash reads bytes: a `"` followed by a combining mark, or the `\n`
    /// of `\r\n`, was missed. A line continuation joins a reference to the word before it.
    @Test func aReferencesOwnTextAndTheLinesBytesAreReadAsDashReadsThem() throws {
        let settings = try TaskSettingsRead(#"""
            {"field": {"type": "command", "shell": true, "command": "echo {{input.x'}} \" ' {{input.a}} \""},
             "mark": {"type": "command", "shell": true, "command": "echo \"\u0301 {{input.a}} \""},
             "crlf": {"type": "command", "shell": true, "command": "cat <<EOF\r\n{{input.a}}\nEOF\r"},
             "joined": {"type": "command", "shell": true, "command": "echo s\\\n{{input.a}}"},
             "good": {"type": "command", "shell": true, "command": "echo {{input.x'}} {{input.a}}\necho {{input.a}}"}}
            """#)
        let found = settings.messages
        #expect(Set(found.keys) == ["/tasks/field/command", "/tasks/mark/command", "/tasks/crlf/command", "/tasks/joined/command"], "\(found)")
        #expect(found["/tasks/field/command"]?.contains("{{input.a}} at character 22 of the shell line is inside double quotes") == true, "\(found)")
        #expect(found["/tasks/mark/command"]?.contains("inside double quotes") == true, "\(found)")
        #expect(found["/tasks/crlf/command"]?.contains("in a here-document") == true, "\(found)")
        #expect(found["/tasks/joined/command"]?.contains("after a line continuation") == true, "\(found)")
        #expect(settings.tasks.map(\.name) == ["good"])

        // Each ran the value's `$(…)` before: now the run fails and starts nothing.
        let harness = Harness("bytes")
        let marker = harness.directory + "/pwned"
        for line in ["echo {{input.x'}} \" ' {{input.a}} \"", "echo \"\u{301} {{input.a}} \"", "cat <<EOF\r\n{{input.a}}\nEOF\r"] {
            let outcome = try #require(harness.run(Harness.task([line], shell: true), input: ["x'": "v", "a": .string("$(touch \(marker))")]))
            #expect(outcome.status == .failed, "\(line.debugDescription): \(outcome)")
        }
        #expect(!FileManager.default.fileExists(atPath: marker))
    }

    @Test func aDefinitionThatSkippedTheSettingsCheckFailsItsRunAndStartsNothing() throws {
        let harness = Harness("unchecked")
        let marker = harness.directory + "/pwned"
        for task in [Harness.task(["echo '{{input.a}}'"], shell: true), Harness.task(["/bin/sh", "-c", "echo {{input.a}}"])] {
            let outcome = try #require(harness.run(task, input: ["a": .string("'; touch \(marker); '")]))
            #expect(outcome.status == .failed, "\(outcome)")
            #expect(outcome.error?.contains("{{input.a}}") == true, "\(outcome)")
        }
        #expect(!FileManager.default.fileExists(atPath: marker))
    }

    @Test func validateSettingsNamesTheFileThePointerAndTheFix() throws {
        let directory = TestPaths.temporaryDirectory("shell-validate")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let file = directory + "/settings.json"
        try #"""
        {"enabled_modules": [], "processes": {},
         "tasks": {"greet": {"type": "command", "shell": true, "command": "echo hello '{{input.name}}'"}}}
        """#.write(toFile: file, atomically: true, encoding: .utf8)
        let result = try runProgram("validate-settings", ["--settings", file, "--no-build"])
        #expect(result.status != 0)
        let text = result.stdout + result.stderr
        #expect(text.contains("/tasks/greet/command"), "\(text)")
        #expect(text.contains("settings.json"), "\(text)")
        #expect(text.contains(#"{{input.name}} at character 12 of the shell line is inside single quotes"#), "\(text)")
        #expect(text.contains(#"write the reference as a word of its own, e.g. echo {{input.name}}, or use the variable "$INPUT_NAME""#), "\(text)")
    }

    @Test func theInputsFieldsAreVariablesAQuotedScriptReadsAsText() throws {
        let harness = Harness("input-variables", environment: ["PATH": "/usr/local/bin:/usr/bin:/bin", "INPUT_STALE": "from the agent"])
        let marker = harness.directory + "/pwned"
        let hostile = "; touch \(marker) $(touch \(marker)) `touch \(marker)` '\"${PATH}"
        let input: JSONValue = ["a": .string(hostile), "n": 2, "list": [1, "x"], "bad-name": "no", "Big": .string(String(repeating: "b", count: 70_000))]
        let task = Harness.task([#"printf '%s|' "$INPUT_A" "$INPUT_N" "$INPUT_LIST" "${INPUT_BAD_NAME-unset}" "${INPUT_STALE-unset}" "${#INPUT_BIG}""#],
                                shell: true)
        let outcome = try #require(harness.run(task, input: input))
        #expect(outcome.status == .succeeded, "\(outcome)")
        #expect(outcome.output == .string(hostile + #"|2|[1,"x"]|unset|unset|0|"#), "\(outcome)")
        #expect(!FileManager.default.fileExists(atPath: marker))
        // The task's own env wins over the input's.
        let given = Harness.task([#"printf '%s' "$INPUT_A""#], shell: true, environment: ["INPUT_A": "fixed"])
        #expect(try #require(harness.run(given, input: ["a": "from input"])).output == .string("fixed"))
    }

    @Test func commandsAndWorkersDoNotGetTheAgentsSecrets() throws {
        let directory = TestPaths.temporaryDirectory("withheld")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let token = "adv-token-0123456789abcdef"
        let settings = #"""
        {"enabled_modules": ["sample"], "processes": {"trades": {"type": "trade_feed", "interval": 0.5}},
         "http": {"listen": "127.0.0.1:0", "tokens": ["${env:ADV_TOKEN}"]},
         "tasks": {"leak": {"type": "command", "shell": true,
                            "command": "printf '%s|' \"${ADV_TOKEN-absent}\" \"${PGPASSWORD-absent}\" \"${KEEP-absent}\""},
                   "given": {"type": "command", "shell": true, "command": "printf '%s' \"$ADV_TOKEN\"",
                             "env": {"ADV_TOKEN": "${env:ADV_TOKEN}"}}}}
        """#
        let agent = try AgentRun(settings: settings, environment: ["ADV_TOKEN": token, "PGPASSWORD": "db-secret", "KEEP": "kept"],
                                 directory: directory)
        defer { _ = agent.stop() }
        #expect(agent.waitForLine(onStderr: true) { $0.contains("http: listening on") } != nil, "\(agent.transcript)")
        func run(_ task: String) throws -> JSONValue? {
            let result = try runProgram("agent-control", ["task", "run", task, "--wait", "--json", "--settings", agent.settingsFile], timeout: 120)
            #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
            return try JSONValue.parse(Data(result.stdout.utf8))["output"]
        }
        #expect(try run("leak") == .string("absent|absent|kept|"))
        #expect(try run("given") == .string(token))
        // The worker (forked by the fork server, or spawned) has neither either.
        #expect(agent.waitForLine(onStderr: true) { $0.contains("[trades] ready in") } != nil, "\(agent.transcript)")
        let workers = agent.workerPids("trades")
        #expect(!workers.isEmpty, "\(agent.transcript)")
        for pid in workers {
            let environment = String(decoding: FileManager.default.contents(atPath: "/proc/\(pid)/environ") ?? Data(), as: UTF8.self)
            #expect(environment.contains("KEEP=kept"), "pid \(pid)")
            #expect(!environment.contains(token) && !environment.contains("db-secret"), "pid \(pid) has the agent's secrets")
        }
        #expect(!agent.transcript.contains(token))
    }
}
