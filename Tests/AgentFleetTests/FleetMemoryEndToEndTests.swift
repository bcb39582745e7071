import AgentTestSupport
import Foundation
import JSONSchema
import Testing

/// Shared memory across a fleet: two real agents on one real PostgreSQL database read and
/// write the same keys — from the CLI of either, and from task handlers (`context.memory` of
/// the `faults` module's `memory_task`) running on both at once by compare-and-set.
@Suite(.ownThreads, .serialized) struct FleetMemoryEndToEndTests {
    static func agent(_ id: String, database: String) throws -> AgentRun {
        try AgentRun.fleetAgent(id, database: database, folder: "fleet-memory-\(id)", settings: #"""
            "enabled_modules": ["faults"], "processes": {},
            "tasks": {"mem": {"type": "faults.memory_task", "max_concurrent": 2}}
            """#)
    }

    static func control(_ agent: AgentRun, _ arguments: [String]) throws -> ProgramResult { try agent.control(arguments) }

    static func entry(_ agent: AgentRun, _ key: String) throws -> JSONValue? {
        let result = try control(agent, ["memory", "get", key, "--json"])
        return result.status == 0 ? try JSONValue.parse(Data(result.stdout.utf8)) : nil
    }

    @Test(.enabled(if: PostgresTestServer.unavailableReason == nil, "\(PostgresTestServer.unavailableReason ?? "")"))
    func twoAgentsReadAndWriteTheSameKeysAndTheirHandlersIncrementsAllCount() async throws {
        let database = try PostgresTestServer.require().makeDatabase()
        let a = try Self.agent("host-a", database: database)
        defer { _ = a.stop() }
        let b = try Self.agent("host-b", database: database)
        defer { _ = b.stop() }

        // What one agent's CLI writes, the other's reads, versions and compare-and-set included.
        let set = try Self.control(a, ["memory", "set", "customer/42", #"{"tier": 3}"#])
        #expect(set.status == 0 && set.stdout.contains("version 1"), "\(set.stdout)\(set.stderr)")
        let read = try #require(try Self.entry(b, "customer/42"), "host-b reads host-a's key:\n\(b.transcript)")
        #expect(read["value"] == ["tier": 3] && read["version"] == 1, "\(read)")
        #expect(try Self.control(b, ["memory", "set", "customer/42", #"{"tier": 4}"#, "--expected-version", "1"]).status == 0)
        let stale = try Self.control(a, ["memory", "set", "customer/42", #"{"tier": 5}"#, "--expected-version", "1"])
        #expect(stale.status != 0 && (stale.stdout + stale.stderr).contains("version 2"), "host-a's stale write is refused: \(stale.stdout)\(stale.stderr)")
        #expect(try Self.entry(a, "customer/42")?["value"] == ["tier": 4])

        // Handlers on both agents add 10 each, four runs at once (submitted two to each agent;
        // the fleet's queue gives them to whichever has room).
        #expect(try Self.control(a, ["memory", "set", "counter", "0"]).status == 0)
        for agent in [a, b, a, b] {
            let queued = try Self.control(agent, ["task", "run", "mem", "--input", #"{"op": "increment", "key": "counter", "times": 10}"#])
            #expect(queued.status == 0, "\(queued.stdout)\(queued.stderr)")
        }
        let deadline = Date().addingTimeInterval(180)
        var last: JSONValue?
        while Date() < deadline {
            last = try Self.entry(b, "counter")
            if last?["value"] == 40 { break }
            try await Task.sleep(for: .milliseconds(200))
        }
        if last?["value"] != 40 {
            // What each run said (its error, the reads it tried again), for the failure below.
            for agent in [a, b] { print((try? Self.control(agent, ["task", "runs", "--task", "mem", "--json"]).stdout) ?? "") }
        }
        #expect(last?["value"] == 40, "no increment lost across the agents: \(String(describing: last))\n\(a.transcript)\n\(b.transcript)")
        #expect(last?["version"] == 41)
        #expect(try Self.control(b, ["memory", "delete", "counter"]).status == 0)
        let gone = try Self.control(a, ["memory", "get", "counter", "--json"])
        #expect(gone.status == 1, "deleted for every agent: \(gone.status) \(gone.stdout)\(gone.stderr)")
    }
}
