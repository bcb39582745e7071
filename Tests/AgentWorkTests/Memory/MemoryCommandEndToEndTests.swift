import AgentTestSupport
@testable import AgentWork
import Foundation
import JSONSchema
import Testing

/// Shared memory through the real agent: `agent-control memory …` over the control socket,
/// `/api/memory` over HTTP, values kept in the agent's store across a restart, writes audited.
@Suite(.ownThreads) struct MemoryCommandEndToEndTests {
    /// No task or schedule; a workflow whose runs wait (their keys need a run that exists).
    static let settings = #"""
        {"enabled_modules": [], "processes": {},
         "http": {"listen": "127.0.0.1:0", "tokens": ["${env:AGENT_API_TOKEN}"]},
         "tasks": {}, "schedules": {},
         "workflows": {"hold": {"steps": [{"id": "wait", "wait_signal": {"name": "go"}}]}}}
        """#

    static func memory(_ agent: ScheduleAgent, _ arguments: [String]) throws -> ProgramResult {
        try runProgram("agent-control", ["memory"] + arguments + ["--settings", agent.run.settingsFile], timeout: 120)
    }

    @Test func theCLIWritesReadsListsAndDeletesKeysWithVersions() throws {
        let directory = TestPaths.temporaryDirectory("memory-cli")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let agent = try ScheduleAgent.start(Self.settings, directory: directory)
        defer { _ = agent.run.stop() }

        let set = try Self.memory(agent, ["set", "customer/42", #"{"name": "Ada", "tier": 2}"#])
        #expect(set.status == 0, "\(set.stderr)")
        #expect(set.stdout.contains("customer/42 = version 1"), "\(set.stdout)")
        #expect(try Self.memory(agent, ["set", "customer/42", #"{"name": "Ada", "tier": 3}"#, "--expected-version", "1"]).status == 0)
        #expect(try Self.memory(agent, ["set", "note", "plain words", "--string"]).status == 0)
        let started = try runProgram("agent-control", ["workflow", "run", "hold", "--settings", agent.run.settingsFile], timeout: 120)
        let run = started.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(started.status == 0 && !run.isEmpty, "\(started.stdout)\(started.stderr)")
        #expect(try Self.memory(agent, ["set", "step", "\"mine\"", "--run", run]).status == 0)
        // A run that does not exist has no keys to write: refused, saying so.
        let typo = try Self.memory(agent, ["set", "step", "1", "--run", run + "0"])
        #expect(typo.status == 1 && typo.stderr.contains("no workflow run \"\(run)0\""), "\(typo.stdout)\(typo.stderr)")

        let get = try Self.memory(agent, ["get", "customer/42", "--json"])
        #expect(get.status == 0, "\(get.stderr)")
        let entry = try JSONValue.parse(Data(get.stdout.utf8))
        #expect(entry["value"] == ["name": "Ada", "tier": 3])
        #expect(entry["version"] == 2)
        #expect(entry["scope"] == "agent")
        #expect(try Self.memory(agent, ["get", "note"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "\"plain words\"")

        // A stale version is refused, saying the version the key is at; nothing changes.
        let stale = try Self.memory(agent, ["set", "customer/42", "1", "--expected-version", "1"])
        #expect(stale.status == 1)
        #expect(stale.stderr.contains("version 2"), "\(stale.stderr)")
        #expect(try Self.memory(agent, ["get", "customer/42", "--json"]).stdout.contains("\"tier\":3"))
        // Not JSON, without --string: refused before it is sent, saying how.
        let notJSON = try Self.memory(agent, ["set", "x", "plain words"])
        #expect(notJSON.status != 0)
        #expect(notJSON.stderr.contains("--string"), "\(notJSON.stderr)")

        let list = try Self.memory(agent, ["list", "--json"])
        let keys = try list.stdout.split(separator: "\n").map { try JSONValue.parse(Data($0.utf8))["key"]?.stringValue ?? "?" }
        #expect(keys == ["customer/42", "note"], "the run's key is in its own scope: \(keys)")
        let runList = try Self.memory(agent, ["list", "--run", run])
        #expect(runList.stdout.hasPrefix("step  v1  "), "\(runList.stdout)")

        #expect(try Self.memory(agent, ["delete", "note"]).stdout.contains("note deleted"))
        #expect(try Self.memory(agent, ["delete", "note"]).stdout.contains("note did not exist"))
        let missing = try Self.memory(agent, ["get", "note"])
        #expect(missing.status == 1)
        #expect(missing.stderr.contains("no memory key \"note\""), "\(missing.stderr)")

        // Writes are audited in the run history with the key.
        let history = try runProgram("agent-control", ["history", "--json", "--settings", agent.run.settingsFile])
        let details = try history.stdout.split(separator: "\n").compactMap { try JSONValue.parse(Data($0.utf8))["detail"]?.stringValue }
        #expect(details.contains { $0.contains("memory_set customer/42 → ok") }, "\(details)")
        #expect(details.contains { $0.contains("memory_set run:\(run) step → ok") }, "\(details)")
    }

    @Test func valuesAreVisibleAndWritableOverHTTPAndOutliveARestart() throws {
        let directory = TestPaths.temporaryDirectory("memory-http")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let first = try ScheduleAgent.start(Self.settings, directory: directory)
        let put = try first.http("PUT", "/api/memory/entry", body: #"{"key": "orders/7", "value": {"amount": 120.5, "items": [1, 2]}}"#)
        #expect(put.status == 200, "\(put.body)")
        #expect(put.body.contains("\"version\":1"), "\(put.body)")
        let created = try first.http("PUT", "/api/memory/entry", body: #"{"key": "orders/7", "value": 1, "expected_version": 0}"#)
        #expect(created.status == 409, "\(created.body)")
        #expect(created.body.contains("\"code\":\"conflict\""), "\(created.body)")
        let big = String(repeating: "x", count: MemoryLimits.valueBytes)
        let tooLarge = try first.http("PUT", "/api/memory/entry", body: #"{"key": "big", "value": "\#(big)"}"#)
        #expect(tooLarge.status == 413, "\(tooLarge.status)")
        #expect(tooLarge.body.contains("at most \(MemoryLimits.valueBytes) bytes"), "\(tooLarge.body.prefix(300))")
        #expect(first.run.stop() == 0)

        let second = try ScheduleAgent.start(nil, directory: directory)
        defer { _ = second.run.stop() }
        let get = try second.http("GET", "/api/memory/entry?key=orders%2F7")
        #expect(get.status == 200, "\(get.body)")
        let entry = try JSONValue.parse(Data(get.body.utf8))["entry"]
        #expect(entry?["value"] == ["amount": 120.5, "items": [1, 2]])
        #expect(entry?["version"] == 1)
        let list = try second.http("GET", "/api/memory?prefix=orders%2F")
        #expect(list.status == 200)
        #expect(list.body.contains("\"key\":\"orders/7\""), "\(list.body)")
        #expect(try second.http("GET", "/api/memory/entry?key=nope").status == 404)
        let deleted = try second.http("DELETE", "/api/memory/entry?key=orders%2F7&expected_version=1")
        #expect(deleted.status == 200, "\(deleted.body)")
        #expect(deleted.body.contains("\"deleted\":true"))
        #expect(try second.http("GET", "/api/memory").body.contains("\"entries\":[]"))
    }
}
