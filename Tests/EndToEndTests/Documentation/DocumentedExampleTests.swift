import AgentTestSupport
import Foundation
import Testing

/// The documents' shell examples run as written — every `curl` and `agent-control` line of
/// their ```sh blocks — with the real curl and the real binaries against a real agent. Only
/// what the documents leave to the reader is given: the host and port (`127.0.0.1:8080` is the
/// agent's), the tokens (`$AGENT_API_TOKEN`, `$TOKEN`), the resources they name (a process
/// `trades`, a chatbot, tasks `backup`, `greet`, `classify`, `reply`, a schedule
/// `nightly_backup`, a user `alice` whose password is the `…` they write).
@Suite(.ownThreads, .serialized) struct DocumentedExampleTests {
    /// The README and the guides in docs/ (not the generated reference).
    static var documents: [String] {
        let guides = (try? FileManager.default.contentsOfDirectory(atPath: TestPaths.repository + "/docs")) ?? []
        return [TestPaths.repository + "/README.md"] + guides.filter { $0.hasSuffix(".md") }.sorted().map { TestPaths.repository + "/docs/" + $0 }
    }

    /// Commands not run, each with why (matched as a part of the command).
    static let notRun: [(part: String, why: String)] = [
        ("agent-control console", "starts an agent in the foreground; the test runs its own"),
        ("agent-control start", "starts an agent; the test runs its own"),
        ("fleet status", "needs a fleet's PostgreSQL"),
        ("logs trades -f", "follows the log until Ctrl-C"),
    ]

    /// Why `command` cannot run as written, when an unquoted word of it is a placeholder the
    /// reader fills in (`[--json]`, `RUN_ID`, `NAME`, `…`, `a | b`, `/path/to/`); quoted words
    /// are values (a JSON body's `[`, the login's password `…`).
    static func placeholder(in command: String) -> String? {
        for word in MarkdownExamples.words(command).joined() where !word.contains("'") && !word.contains("\"") {
            if word == "|" { return "alternatives (a | b)" }
            if word.contains("[") || word.contains("…") || word.hasPrefix("/path/to/") { return "the placeholder \(word)" }
            if word.count > 1, word.allSatisfy({ $0.isUppercase || $0 == "_" }), !["GET", "POST", "PUT", "DELETE", "HEAD", "PATCH"].contains(word) {
                return "the placeholder \(word)"
            }
        }
        return nil
    }

    static let token = "documented-examples-token-0123456789"
    /// The password the README's login example sends.
    static let password = "…"

    static func settings(hash: String) -> String {
        """
        {"enabled_modules": ["sample"],
         "http": {"listen": "127.0.0.1:0", "tokens": ["${env:AGENT_API_TOKEN}"], "users": {"alice": {"password_hash": "\(hash)"}}},
         "processes": {"trades": {"type": "trade_feed", "pairs": ["ETH/USD"], "interval": 0.5},
                       "chat": {"type": "chatbot", "logic_adapters": ["features", "status"]}},
         "tasks": {"backup": {"type": "command", "command": ["/bin/true"], "input": {"type": "object", "properties": {"full": {"type": "boolean"}}}},
                   "greet": {"type": "command", "command": ["/usr/bin/python3", "greet.py"], "cwd": "jobs"},
                   "classify": {"type": "command", "command": ["/bin/true"]}, "reply": {"type": "command", "command": ["/bin/true"]}},
         "schedules": {"nightly_backup": {"cron": "0 3 * * *", "run": {"task": "backup"}}}}
        """
    }

    /// `curl` and `agent-control` found first on the PATH: the real ones, curl with a deadline
    /// and the answer's status after the body.
    static func wrappers(in folder: String) throws -> String {
        let bin = folder + "/bin"
        try FileManager.default.createDirectory(atPath: bin, withIntermediateDirectories: true)
        let scripts = [
            "curl": "#!/bin/sh\nexec /usr/bin/curl --max-time \"${EXAMPLE_MAX_TIME:-60}\" -w '\\n@@status %{http_code}\\n' \"$@\"\n",
            "agent-control": "#!/bin/sh\nexec \(TestPaths.products)/agent-control \"$@\"\n",
        ]
        for (name, text) in scripts {
            try text.write(toFile: bin + "/" + name, atomically: true, encoding: .utf8)
            chmod(bin + "/" + name, 0o755)
        }
        return bin
    }

    /// The agent the examples run against, in its folder with docs/tasks.md's greet.py and the
    /// input file its `@input.json` example reads, and the examples' environment (the real curl
    /// and agent-control first on the PATH, the tokens) once its processes run.
    static func startAgent() throws -> (agent: AgentRun, port: Int, environment: [String: String]) {
        let (agent, base) = try AgentRun.listening(settings: Self.settings(hash: try APIAgent.hash(Self.password)), environment: ["AGENT_API_TOKEN": Self.token])
        let port = try #require(base.split(separator: ":").last.flatMap { Int($0) })
        // The greet.py of docs/tasks.md and the input file its `@input.json` example reads.
        let readme = try String(contentsOfFile: TestPaths.repository + "/docs/tasks.md", encoding: .utf8)
        let greet = try #require(MarkdownExamples.blocks(in: readme, languages: ["python"]).first { $0.lines.joined().contains("AGENT_TASK_RUN_ID") })
        try FileManager.default.createDirectory(atPath: agent.directory + "/jobs", withIntermediateDirectories: true)
        try greet.lines.joined(separator: "\n").write(toFile: agent.directory + "/jobs/greet.py", atomically: true, encoding: .utf8)
        try #"{"full": false}"#.write(toFile: agent.directory + "/input.json", atomically: true, encoding: .utf8)
        let bin = try Self.wrappers(in: TestPaths.temporaryDirectory("examples"))
        let environment = ["PATH": bin + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"),
                           "AGENT_API_TOKEN": Self.token, "TOKEN": Self.token]
        // The processes run before the first example.
        #expect(HTTPAgent.eventually { (try? runProgram("agent-control", ["status"], in: agent.directory))?.stdout.contains("running") == true })
        return (agent, port, environment)
    }

    /// The lines of the blocks marked `<!-- example: run -->` (run whole by
    /// ``DocumentedRunnableBlockTests``, not command by command here).
    static func runnableLines(in documents: [String]) throws -> Set<String> {
        var lines: Set<String> = []
        for document in documents {
            for block in try MarkdownExamples.fencedBlocks(inFile: document) where block.marked("run") {
                for line in block.line...(block.line + block.lines.count) { lines.insert("\(document):\(line)") }
            }
        }
        return lines
    }

    @Test func theDocumentsShellExamplesRunAsWritten() throws {
        let runnable = try Self.runnableLines(in: Self.documents)
        let examples = try MarkdownExamples.shellCommands(in: Self.documents)
            .filter { ["curl", "agent-control"].contains($0.program) && !runnable.contains("\($0.file):\($0.line)") }
        #expect(examples.count > 30, "the extractor found \(examples.count) examples")
        let (agent, port, environment) = try Self.startAgent()
        defer { _ = agent.stop() }

        var ran = 0
        var failures: [String] = []
        for example in examples {
            if Self.placeholder(in: example.command) != nil || Self.notRun.contains(where: { example.command.contains($0.part) }) { continue }
            ran += 1
            if let failure = try Self.run(example, port: port, in: agent.directory, environment: environment) { failures.append(failure) }
        }
        #expect(ran > 25, "ran \(ran) examples")
        #expect(failures.isEmpty, "\(failures.count) of \(ran) examples failed:\n\(failures.joined(separator: "\n\n"))")
    }

    /// Runs one example (with its block's assignments but those of the variables the test
    /// gives) and says how it failed, if it did.
    static func run(_ example: MarkdownExample, port: Int, in directory: String, environment: [String: String]) throws -> String? {
        let given = Set(environment.keys)
        let assignments = example.assignments.filter { Set(MarkdownExamples.assignedNames($0)).isDisjoint(with: given) }
        let script = (assignments + [example.command]).joined(separator: "\n").replacingOccurrences(of: "127.0.0.1:8080", with: "127.0.0.1:\(port)")
        var environment = environment
        // A stream answers until Ctrl-C: its first seconds are enough.
        let streams = example.command.contains("follow=1")
        if streams { environment["EXAMPLE_MAX_TIME"] = "3" }
        let result = try runProgram("/bin/bash", ["-c", script], in: directory, environment: environment, timeout: 180)
        let output = "exit \(result.status)\nstdout: \(result.stdout.suffix(1500))\nstderr: \(result.stderr.suffix(1500))"
        guard example.program == "curl" else {
            return result.status == 0 ? nil : "\(example)\n\(output)"
        }
        guard let marker = result.stdout.range(of: "@@status ", options: .backwards),
              let status = Int(result.stdout[marker.upperBound...].prefix { $0.isNumber }) else {
            return "\(example)\nno answer\n\(output)"
        }
        let allowed = (200...299).contains(status) || example.statusesNamed.contains(status)
        let ended = result.status == 0 || (streams && result.status == 28)
        return allowed && ended ? nil : "\(example)\nstatus \(status) (2xx or \(example.statusesNamed.sorted()) expected)\n\(output)"
    }
}
