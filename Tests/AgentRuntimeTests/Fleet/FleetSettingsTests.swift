import AgentTestSupport
@testable import AgentWork
import Foundation
import JSONSchema
import Testing
@testable import AgentRuntime

/// The `fleet` section: read as the agent uses it, every problem at its JSON pointer.
@Suite(.ownThreads) struct FleetSettingsTests {
    static func issues(_ fleet: String) throws -> [String] {
        let settings = AgentSettings(json: try JSONValue.parse(#"{"enabled_modules": [], "processes": {}, "fleet": \#(fleet)}"#), file: "settings.json")
        return settings.hostIssues.map { "\($0.pointer): \($0.message)" }
    }

    @Test func aFleetIsReadFromItsURLWithThePasswordFromTheEnvironment() throws {
        let json = try JSONValue.parse(#"{"postgres": "postgres://agent@db.example:6543/agents?sslmode=require", "password": "${env:FLEET_PW}", "agent_id": "host-a", "lease": 12}"#)
        let fleet = try #require(try FleetSettings(json, environment: ["FLEET_PW": "s3cret"]))
        #expect(fleet.host == "db.example")
        #expect(fleet.port == 6543)
        #expect(fleet.user == "agent")
        #expect(fleet.database == "agents")
        #expect(fleet.password == "s3cret")
        #expect(fleet.tls == .require)
        #expect(fleet.agentID == "host-a")
        #expect(fleet.lease == 12)
        #expect(fleet.displayURL == "postgres://agent@db.example:6543/agents?sslmode=require", "no password shown")
        let plain = try #require(try FleetSettings(try JSONValue.parse(#"{"postgres": "postgres://agent@127.0.0.1/agents", "agent_id": "b"}"#)))
        #expect(plain.port == 5432)
        #expect(plain.tls == .disable)
        #expect(plain.password == nil)
    }

    @Test func withoutAFleetNothingChanges() throws {
        let settings = AgentSettings(json: try JSONValue.parse(#"{"enabled_modules": [], "processes": {}}"#), file: "settings.json")
        #expect(settings.fleet == nil)
        #expect(settings.hostIssues.isEmpty)
    }

    @Test func eachProblemIsReportedAtItsPointer() throws {
        #expect(try Self.issues(#"{"postgres": "mysql://agent@db/agents", "agent_id": "a"}"#).first?.hasPrefix("/fleet/postgres: expected a postgres:// URL") == true)
        #expect(try Self.issues(#"{"postgres": "postgres://db/agents", "agent_id": "a"}"#).first?.hasPrefix("/fleet/postgres: expected a user in the URL") == true)
        #expect(try Self.issues(#"{"postgres": "postgres://agent:pw@db/agents", "agent_id": "a"}"#).first?.hasPrefix("/fleet/postgres: the URL holds a password") == true)
        #expect(try Self.issues(#"{"postgres": "postgres://agent@db/", "agent_id": "a"}"#).first?.hasPrefix("/fleet/postgres: expected the database's name") == true)
        #expect(try Self.issues(#"{"postgres": "postgres://agent@db/agents?sslmode=prefer", "agent_id": "a"}"#).first
                == "/fleet/postgres: expected sslmode=disable or sslmode=require; found sslmode=prefer")
        #expect(try Self.issues(#"{"postgres": "postgres://agent@db/agents", "password": "hunter2", "agent_id": "a"}"#).first?
            .hasPrefix("/fleet/password: expected a reference to the environment") == true)
        #expect(try Self.issues(#"{"postgres": "postgres://agent@db/agents", "password": "${env:AGENT_FLEET_TEST_UNSET_VARIABLE}", "agent_id": "a"}"#)
                == ["/fleet/password: environment variable AGENT_FLEET_TEST_UNSET_VARIABLE is not set (referenced as ${env:AGENT_FLEET_TEST_UNSET_VARIABLE})"])
        #expect(try Self.issues(#"{"postgres": "postgres://agent@db/agents"}"#).contains { $0.hasPrefix("/fleet: ") && $0.contains("agent_id") })
        #expect(try Self.issues(#"{"postgres": "postgres://agent@db/agents", "agent_id": "a", "lease": 0}"#).contains { $0.hasPrefix("/fleet/lease: ") })
        #expect(try Self.issues(#"{"postgres": "postgres://agent@db/agents", "agent_id": "a b"}"#).first?.hasPrefix("/fleet/agent_id: ") == true)
    }

    @Test func theAssignmentHoldIsOneSecondByDefaultZeroTurnsTheChoiceOffAndOutOfRangeIsRefused() throws {
        let standard = try #require(try FleetSettings(try JSONValue.parse(#"{"postgres": "postgres://agent@db/agents", "agent_id": "a"}"#)))
        #expect(standard.assignmentHold == 1)
        let off = try #require(try FleetSettings(try JSONValue.parse(#"{"postgres": "postgres://agent@db/agents", "agent_id": "a", "assignment_hold": 0}"#)))
        #expect(off.assignmentHold == 0)
        #expect(try Self.issues(#"{"postgres": "postgres://agent@db/agents", "agent_id": "a", "assignment_hold": -1}"#).contains { $0.hasPrefix("/fleet/assignment_hold: ") })
        #expect(try Self.issues(#"{"postgres": "postgres://agent@db/agents", "agent_id": "a", "assignment_hold": "1"}"#).contains { $0.hasPrefix("/fleet/assignment_hold: ") })
    }

    @Test func publishedTypesAreLocalTypesAndAFleetSubscriptionNeedsAFleet() throws {
        let fleet = try #require(try FleetSettings(try JSONValue.parse(#"{"postgres": "postgres://agent@db/agents", "agent_id": "a", "publish": ["alert", "task.failed"]}"#)))
        #expect(fleet.publish == ["alert", "task.failed"])
        #expect(fleet.eventRetention == 604_800)
        #expect(try Self.issues(#"{"postgres": "postgres://agent@db/agents", "agent_id": "a", "publish": ["fleet:alert"]}"#)
                == [#"/fleet/publish/0: expected a local event type (what this agent's processes emit); found "fleet:alert", which names the fleet's events: publish "alert""#])
        #expect(try Self.issues(#"{"postgres": "postgres://agent@db/agents", "agent_id": "a", "publish": ["a", "a"]}"#).contains { $0.hasPrefix("/fleet/publish: ") })

        // A monitor subscribed to the fleet's events in settings without a fleet, or to "fleet:" alone.
        let file = TestPaths.temporaryDirectory("fleet-subscribe") + "/settings.json"
        defer { try? FileManager.default.removeItem(atPath: (file as NSString).deletingLastPathComponent) }
        try #"""
            {"enabled_modules": ["faults"], "processes": {"sink": {"type": "slow_sink", "subscribe": ["fault_tick", "fleet:alert", "fleet:"]}}}
            """#.write(toFile: file, atomically: true, encoding: .utf8)
        let result = try runProgram("validate-settings", ["--settings", file, "--no-build"])
        #expect(result.status == 2)
        #expect(result.stdout.contains(#"/processes/sink/subscribe/1: "fleet:alert" is an event type published by the agents of a fleet, but these settings have no "fleet""#), "\(result.stdout)")
        #expect(result.stdout.contains(#"/processes/sink/subscribe/2: expected an event type after "fleet:""#), "\(result.stdout)")
        #expect(!result.stdout.contains("/subscribe/0"), "\(result.stdout)")
    }
}
