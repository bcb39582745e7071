@testable import AgentBase
import AgentTestSupport
import Foundation
import JSONSchema
import Testing

/// `context.memory` from a real module worker: the `faults` module's `memory_task` handler in
/// executor workers of a real agent reads and writes shared memory through its worker's
/// frames to the supervisor, with compare-and-set from concurrent runs.
@Suite(.ownThreads) struct MemoryModuleEndToEndTests {
    static func control(_ agent: AgentRun, _ arguments: [String]) throws -> ProgramResult {
        try runProgram("agent-control", arguments + ["--settings", agent.settingsFile], timeout: 120)
    }

    static func output(_ result: ProgramResult) throws -> JSONValue {
        let run = try JSONValue.parse(Data(result.stdout.utf8))
        #expect(run["status"] == "succeeded", "\(result.stdout)\(result.stderr)")
        return run["output"] ?? .null
    }

    @Test func aTaskHandlerReadsAndWritesSharedMemoryWithCompareAndSet() throws {
        let settings = #"""
            {"enabled_modules": ["faults"], "processes": {},
             "tasks": {"mem": {"type": "faults.memory_task", "max_concurrent": 4}}}
            """#
        let agent = try AgentRun(settings: settings, arguments: ["--no-build", "--json"], directory: TestPaths.temporaryDirectory("memory-module"))
        defer { _ = agent.stop() }
        #expect(agent.waitForLine(onStderr: true) { $0.contains("control socket:") } != nil, "\(agent.transcript)")
        #expect(try Self.control(agent, ["memory", "set", "counter", "10"]).status == 0)

        // Three runs at once, in one executor worker, each adding 20 by compare-and-set.
        let results = LockedValue<[ProgramResult]>([])
        DispatchQueue.concurrentPerform(iterations: 3) { _ in
            let result = try? Self.control(agent, ["task", "run", "mem", "--input", #"{"op": "increment", "key": "counter", "times": 20}"#, "--wait", "--json"])
            results.withLock { $0.append(contentsOf: result.map { [$0] } ?? []) }
        }
        let finished = results.withLock { $0 }
        #expect(finished.count == 3)
        for result in finished {
            let output = try Self.output(result)
            #expect(output["error"] == nil, "\(output)")
        }
        let entry = try JSONValue.parse(Data(try Self.control(agent, ["memory", "get", "counter", "--json"]).stdout.utf8))
        #expect(entry["value"] == 70, "no increment lost: \(entry)")
        #expect(entry["version"] == 61)

        // What the CLI wrote, the handler reads; what it deletes is gone.
        let read = try Self.output(try Self.control(agent, ["task", "run", "mem", "--input", #"{"op": "read", "key": "counter"}"#, "--wait", "--json"]))
        #expect(read["value"] == 70 && read["version"] == 61, "\(read)")
        let deleted = try Self.output(try Self.control(agent, ["task", "run", "mem", "--input", #"{"op": "delete", "key": "counter"}"#, "--wait", "--json"]))
        #expect(deleted["deleted"] == true, "\(deleted)")
        #expect(try Self.control(agent, ["memory", "get", "counter"]).status == 1)

        // A run that is no workflow step has no run scope: refused, saying so.
        let scoped = try Self.output(try Self.control(agent, ["task", "run", "mem", "--input", #"{"op": "read", "key": "x", "scope": "run"}"#, "--wait", "--json"]))
        #expect(scoped["error"]?.stringValue?.contains("only for a task handler's run that is a step of a workflow run") == true, "\(scoped)")
    }

    @Test func aProcessCountsItsStartsInSharedMemory() throws {
        let settings = #"""
            {"enabled_modules": ["faults"], "processes": {"counter": {"type": "memory_starts"}}}
            """#
        let agent = try AgentRun(settings: settings, arguments: ["--no-build", "--json"], directory: TestPaths.temporaryDirectory("memory-process"))
        defer { _ = agent.stop() }
        #expect(agent.waitForLine(onStderr: true) { $0.contains("memory starts 1") } != nil, "\(agent.transcript)")
        #expect(try Self.control(agent, ["process", "restart", "counter"]).status == 0)
        #expect(agent.waitForLine(onStderr: true) { $0.contains("memory starts 2") } != nil, "\(agent.transcript)")
        let entry = try JSONValue.parse(Data(try Self.control(agent, ["memory", "get", "starts/counter", "--json"]).stdout.utf8))
        #expect(entry["value"] == 2 && entry["version"] == 2, "\(entry)")
    }

    /// A page cut short says where the next begins as a shell word, in text and beside --json
    /// (on stderr): with values of 200 KB a page of about 1 MiB holds six keys, and a script
    /// reading --json took the first page for all.
    @Test func aCutPageSaysWhereTheNextBeginsAsAShellWordAlsoWithJSON() throws {
        let agent = try AgentRun(settings: #"{"enabled_modules": [], "processes": {}}"#, arguments: ["--no-build", "--json"],
                                 directory: TestPaths.temporaryDirectory("memory-pages"))
        defer { _ = agent.stop() }
        #expect(agent.waitForLine(onStderr: true) { $0.contains("control socket:") } != nil, "\(agent.transcript)")
        let value = "\"" + String(repeating: "v", count: 200_000) + "\""
        let keys = (0..<8).map { "page \($0)'s" }
        let file = agent.directory + "/value.json"
        try value.write(toFile: file, atomically: true, encoding: .utf8)
        for key in keys { #expect(try Self.control(agent, ["memory", "set", key, "@" + file]).status == 0, "\(key)") }
        let text = try Self.control(agent, ["memory", "list"])
        #expect(text.stdout.contains(#"… more keys: --after='page 5'\''s'"#), "\(text.stdout.suffix(300))")
        let json = try Self.control(agent, ["memory", "list", "--json"])
        #expect(json.stdout.split(separator: "\n").count == 6 && json.stderr.contains(#"… more keys: --after='page 5'\''s'"#), "\(json.stderr)")
        // The word, pasted into a shell, is the key.
        let rest = try runProgram("/bin/sh", ["-c", "'\(TestPaths.products)/agent-control' memory list --json --settings '\(agent.settingsFile)' --after='page 5'\\''s'"],
                                  timeout: 120)
        #expect(rest.stdout.split(separator: "\n").count == 2 && rest.stderr.isEmpty, "\(rest.stdout.prefix(200))\(rest.stderr)")
        // A key that begins with `-`: the word is `--after=…`, not an option of its own.
        for key in ["--a", "--b"] {
            #expect(try runProgram("agent-control", ["memory", "set", "--settings", agent.settingsFile, "--", key, "1"], timeout: 120).status == 0)
        }
        let dashed = try Self.control(agent, ["memory", "list", "--limit", "1", "--prefix=-"])
        #expect(dashed.stdout.contains("… more keys: --after='--a'"), "\(dashed.stdout)")
        let after = try runProgram("/bin/sh", ["-c", "'\(TestPaths.products)/agent-control' memory list --prefix=- --settings '\(agent.settingsFile)' --after='--a'"], timeout: 120)
        #expect(after.status == 0 && after.stdout.hasPrefix("--b  v1"), "\(after.stdout)\(after.stderr)")
    }
}
