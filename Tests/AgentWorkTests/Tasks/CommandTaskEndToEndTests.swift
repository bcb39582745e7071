import AgentTestSupport
import Foundation
import JSONSchema
import Testing

/// `command` tasks through the real agent: `agent-control task run NAME --wait` against a
/// running `agent-control console`, the command runner registered for type `"command"`.
@Suite(.ownThreads) struct CommandTaskEndToEndTests {
    /// The Python command of docs/tasks.md (`jobs/greet.py`), read from the guide itself so
    /// that the example shown is the one that runs: it reads its input from stdin, prints JSON.
    static func guideScript() throws -> String {
        let readme = try String(contentsOfFile: TestPaths.repository + "/docs/tasks.md", encoding: .utf8)
        guard let intro = readme.range(of: "A Python command — `jobs/greet.py`"),
              let open = readme.range(of: "```python\n", range: intro.upperBound..<readme.endIndex),
              let close = readme.range(of: "```", range: open.upperBound..<readme.endIndex) else {
            throw HTTPProbe.Failure(description: "docs/tasks.md has no Python command example after \"A Python command — `jobs/greet.py`\"")
        }
        return String(readme[open.upperBound..<close.lowerBound])
    }

    @Test func aPythonCommandTakesItsInputOnStdinAndItsJSONBecomesTheRunsOutput() throws {
        let directory = TestPaths.temporaryDirectory("command-e2e")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try FileManager.default.createDirectory(atPath: directory + "/jobs", withIntermediateDirectories: true)
        try Self.guideScript().write(toFile: directory + "/jobs/greet.py", atomically: true, encoding: .utf8)
        let tasks = #"""
            "greet": {"type": "command", "command": ["/usr/bin/python3", "greet.py"], "cwd": "jobs"},
            "broken": {"type": "command", "command": "echo oops >&2; exit 3", "shell": true},
            "missing": {"type": "command", "command": ["/no/such/program"]}
            """#
        let (agent, _) = try TaskAgent.agent(tasks: tasks, directory: directory)
        defer { _ = agent.stop() }

        let greeted = try TaskAgent.control(agent, ["run", "greet", "--input", #"{"names": ["Ada", "Linus"]}"#, "--wait", "--json"])
        #expect(greeted.status == 0, "\(greeted.stdout)\(greeted.stderr)")
        let run = try JSONValue.parse(greeted.stdout.trimmingCharacters(in: .whitespacesAndNewlines))
        #expect(run["status"] == "succeeded")
        #expect(run["exit_code"] == 0)
        let id = try #require(run["id"]?.stringValue)
        #expect(run["output"] == ["greeted": 2, "lines": ["hello Ada", "hello Linus"], "run": .string(id), "attempt": 1])

        let broken = try TaskAgent.control(agent, ["run", "broken", "--wait", "--json"])
        #expect(broken.status == 1, "\(broken.stdout)\(broken.stderr)")
        let failed = try JSONValue.parse(broken.stdout.trimmingCharacters(in: .whitespacesAndNewlines))
        #expect(failed["status"] == "failed")
        #expect(failed["exit_code"] == 3)
        #expect(failed["error"] == "exited with status 3; last line of stderr: oops")
        #expect(failed["stderr_tail"] == "oops")

        let missing = try TaskAgent.control(agent, ["run", "missing", "--wait", "--json"])
        #expect(missing.status == 1)
        let notRun = try JSONValue.parse(missing.stdout.trimmingCharacters(in: .whitespacesAndNewlines))
        #expect(notRun["status"] == "failed")
        #expect(notRun["error"]?.stringValue?.hasPrefix("cannot run /no/such/program: No such file or directory") == true, "\(missing.stdout)")
    }
}

extension CommandTaskEndToEndTests {
    /// An output nested past the readers' bound would have made `task runs` fail for every run
    /// and its own run unreadable (the CLI's reader takes 512 levels, the answer adds a few):
    /// such output is kept as its text, and a shallow one stays JSON.
    @Test func anOutputNestedDeeperThanAnInputIsKeptAsTextAndEveryListStillReads() throws {
        let directory = TestPaths.temporaryDirectory("command-deep")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let tasks = #"""
            "deep": {"type": "command", "command": "python3 -c 'print(\"[\" * 511 + \"]\" * 511)'", "shell": true},
            "shallow": {"type": "command", "command": "python3 -c 'print(\"[\" * 100 + \"]\" * 100)'", "shell": true}
            """#
        let (agent, _) = try TaskAgent.agent(tasks: tasks, directory: directory)
        defer { _ = agent.stop() }

        let deep = try TaskAgent.control(agent, ["run", "deep", "--wait", "--json"])
        #expect(deep.status == 0, "\(deep.stdout)\(deep.stderr)")
        let run = try JSONValue.parse(deep.stdout.trimmingCharacters(in: .whitespacesAndNewlines))
        #expect(run["output"] == .string(String(repeating: "[", count: 511) + String(repeating: "]", count: 511)))
        let id = try #require(run["id"]?.stringValue)

        let shallow = try TaskAgent.control(agent, ["run", "shallow", "--wait", "--json"])
        #expect(shallow.status == 0, "\(shallow.stdout)\(shallow.stderr)")
        let kept = try JSONValue.parse(shallow.stdout.trimmingCharacters(in: .whitespacesAndNewlines))
        #expect(kept["output"]?.isContainer == true, "100 levels stay JSON")

        for arguments in [["runs"], ["runs", "--json"], ["show", id, "--json"]] {
            let read = try TaskAgent.control(agent, arguments)
            #expect(read.status == 0, "task \(arguments.joined(separator: " ")): \(read.stdout)\(read.stderr)")
            #expect(read.stdout.contains(id), "task \(arguments.joined(separator: " ")) shows the deep run")
        }
    }
}

extension CommandTaskEndToEndTests {
    /// An input of up to 1 MiB is a run's input from the command line as over HTTP: the control
    /// socket took requests of 1 MiB in all, so an input just under it was refused as a request
    /// "too long"; one over it is refused as an input too large.
    @Test func anInputOfNearlyOneMiBRunsFromTheCommandLineAndOneOverItIsRefusedAtInput() throws {
        let directory = TestPaths.temporaryDirectory("command-big-input")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let (agent, _) = try TaskAgent.agent(tasks: #""take": {"type": "command", "command": ["/bin/true"]}"#, directory: directory)
        defer { _ = agent.stop() }
        let file = directory + "/input.json"
        for (length, fits) in [(1_048_560, true), (1_048_600, false)] {
            let text = #"{"x": ""# + String(repeating: "y", count: length - 10) + #""}"#
            try text.write(toFile: file, atomically: true, encoding: .utf8)
            let run = try TaskAgent.control(agent, ["run", "take", "--input", "@" + file])
            if fits {
                #expect(run.status == 0, "an input of \(text.utf8.count) bytes: \(run.stderr)")
            } else {
                #expect(run.status != 0 && run.stderr.contains("the input is more than 1048576 bytes of JSON (1 MiB)"), "an input of \(text.utf8.count) bytes: \(run.stdout)\(run.stderr)")
            }
        }
    }

    /// `--input @/dev/stdin` (a pipe), as `@FILE` of a FIFO, said "cannot read the file
    /// (Inappropriate ioctl for device)". Read to its end now; a file that does not end
    /// (`@/dev/zero`) is refused past 64 MiB.
    @Test func anInputFromAPipeIsReadAndAnEndlessFileIsRefused() throws {
        let directory = TestPaths.temporaryDirectory("command-piped-input")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let (agent, _) = try TaskAgent.agent(tasks: #""echo": {"type": "command", "shell": true, "command": "cat"}"#, directory: directory)
        defer { _ = agent.stop() }
        let piped = try runProgram("agent-control", ["task", "run", "echo", "--wait", "--json", "--input", "@/dev/stdin", "--settings", agent.settingsFile],
                                   input: Data(#"{"from": "a pipe"}"#.utf8), timeout: 120)
        #expect(piped.status == 0, "\(piped.stdout)\(piped.stderr)")
        #expect(piped.stdout.contains("a pipe"), "\(piped.stdout)")
        let endless = try TaskAgent.control(agent, ["run", "echo", "--input", "@/dev/zero"])
        #expect(endless.status != 0 && endless.stderr.contains("--input @/dev/zero: the file is larger than 64 MiB"), "\(endless.stderr)")
    }
}
