import AgentTestSupport
import Foundation
import JSONSchema
import Testing

/// `agent-control task|schedule|executor define|get|delete` against a real agent: the same
/// commands as the HTTP routes, the same refusals, the CLI's exit statuses.
@Suite(.ownThreads, .serialized) struct ResourceCommandLineTests {
    @Test func tasksSchedulesAndExecutorsAreDefinedReadAndDeletedFromTheCommandLine() throws {
        let (agent, directory) = try ResourceAgent.start("resource-cli")
        defer { agent.stop(); try? FileManager.default.removeItem(atPath: directory) }
        let original = agent.text

        // Invalid: every error with its pointer on stderr, exit status 2, nothing written.
        let invalid = try agent.cli(["task", "define", "note", "--json", #"{"type": "command", "command": [], "timeout": -5}"#])
        #expect(invalid.status == 2 && invalid.stderr.contains("/tasks/note/timeout") && invalid.stderr.contains("/tasks/note/command"), "\(invalid.stderr)")
        #expect(agent.text == original)

        // A task from a file, a schedule and an executor naming it.
        let file = directory + "/note.json"
        try #"{"type": "command", "command": "echo '{\"cli\": true}'", "shell": true}"#.write(toFile: file, atomically: true, encoding: .utf8)
        let defined = try agent.cli(["task", "define", "note", "--file", file])
        #expect(defined.status == 0 && defined.stdout.contains("written"), "\(defined.stdout)\(defined.stderr)")
        #expect(try agent.run("note")["output"]?["cli"] == true)
        let taken = try agent.cli(["task", "define", "note", "--file", file])
        #expect(taken.status == 1, "a name that is taken needs --replace")
        #expect(taken.stderr.contains("`agent-control task define note --replace`"), "the refusal names the option: \(taken.stderr)")
        let shown = try agent.cli(["task", "get", "note"])
        #expect(shown.status == 0 && (try? JSONValue.parse(Data(shown.stdout.utf8)))?["shell"] == true, "\(shown.stdout)\(shown.stderr)")
        let hash = try #require(try JSONValue.parse(Data(try agent.cli(["task", "get", "note", "--json"]).stdout.utf8))["hash"]?.stringValue)
        #expect(try agent.cli(["schedule", "define", "hourly", "--json", #"{"cron": "@hourly", "run": {"task": "note"}}"#]).status == 0)
        #expect(try agent.cli(["executor", "define", "pool", "--json", #"{"tasks": {"note": {}}}"#]).status == 0)
        #expect(try agent.cli(["executor", "get", "pool"]).stdout.contains("\"executor\""))

        // A stale hash: refused, exit status 1.
        let stale = try agent.cli(["task", "define", "note", "--replace", "--json", #"{"type": "command", "command": ["/bin/true"]}"#, "--if-match", hash])
        #expect(stale.status == 1 && stale.stderr.contains("changed since it was read"), "\(stale.stderr)")

        // Deleting what is named: refused, naming each referrer.
        let named = try agent.cli(["task", "delete", "note"])
        #expect(named.status == 1 && named.stderr.contains(#"schedule "hourly""#) && named.stderr.contains(#"executor "pool""#), "\(named.stderr)")
        #expect(try agent.cli(["schedule", "delete", "hourly"]).status == 0)
        #expect(try agent.cli(["executor", "delete", "pool"]).status == 0)
        #expect(try agent.cli(["task", "delete", "note"]).status == 0)
        #expect(agent.text == original, "\(agent.text)")
        let missing = try agent.cli(["schedule", "get", "hourly"])
        #expect(missing.status == 1 && missing.stderr.contains(#"no schedule named "hourly""#), "\(missing.stderr)")

        let help = try runProgram("agent-control", ["task", "define", "--help"])
        #expect(help.stdout.contains("--file") && help.stdout.contains("--replace") && help.stdout.contains("--if-match"), "\(help.stdout)")
    }
}
