@testable import AgentBase
import AgentTestSupport
import Foundation
import Testing

/// The commands find their agent as git finds its repository: `--settings`, else
/// `settings.json` in the current folder or the nearest parent; `-C DIR` anywhere.
@Suite(.ownThreads, .serialized) struct AgentDiscoveryTests {
    static let settings = #"{"enabled_modules": ["sample"], "processes": {"trades": {"type": "trade_feed", "interval": 0.2}}}"#

    /// An agent in a temporary folder with a sub-folder `a/b`, stopped at the end.
    final class Agent {
        let directory = TestPaths.temporaryDirectory("discovery")
        var settings: String { directory + "/settings.json" }
        var subfolder: String { directory + "/a/b" }

        init() throws {
            try AgentDiscoveryTests.settings.write(toFile: settings, atomically: true, encoding: .utf8)
            try FileManager.default.createDirectory(atPath: subfolder, withIntermediateDirectories: true)
        }

        deinit { _ = try? runProgram("agent-control", ["stop", "--settings", settings, "--timeout", "20"]) }

        var pid: Int32? { Pidfile.holder(of: directory + "/.agent/run/agent.pid") }
    }

    /// Whether `pid` is gone within a few seconds (`stop` returns once the pidfile is released,
    /// a moment before the process has exited).
    static func exits(_ pid: Int32) -> Bool {
        let deadline = Date().addingTimeInterval(10)
        while AgentRun.isAlive(pid), Date() < deadline { Thread.sleep(forTimeInterval: 0.02) }
        return !AgentRun.isAlive(pid)
    }

    @Test func stopFromASubfolderStopsTheAgentOfTheNearestSettings() throws {
        let agent = try Agent()
        let started = try runProgram("agent-control", ["start", "--no-build"], in: agent.directory)
        #expect(started.status == 0, "\(started.stderr)")
        let pid = try #require(agent.pid)

        let status = try runProgram("agent-control", ["status", "--json"], in: agent.subfolder)
        #expect(status.status == 0, "\(status.stdout)\(status.stderr)")
        #expect(status.stdout.contains("\"trades\""))

        let stopped = try runProgram("agent-control", ["stop"], in: agent.subfolder)
        #expect(stopped.status == 0, "\(stopped.stderr)")
        #expect(stopped.stdout.contains("stopped (pid \(pid))"), "\(stopped.stdout)\(stopped.stderr)")
        #expect(Self.exits(pid))
    }

    @Test func dashCBeforeOrAfterTheCommandRunsAsIfStartedThere() throws {
        let agent = try Agent()
        let elsewhere = TestPaths.temporaryDirectory("elsewhere")
        let started = try runProgram("agent-control", ["-C", agent.directory, "start", "--no-build"], in: elsewhere)
        #expect(started.status == 0, "\(started.stderr)")
        let pid = try #require(agent.pid)
        let before = try runProgram("agent-control", ["-C", agent.subfolder, "status"], in: elsewhere)
        #expect(before.status == 0, "\(before.stdout)\(before.stderr)")
        #expect(before.stdout.contains("agent pid \(pid)"))
        let after = try runProgram("agent-control", ["status", "-C", "a/b"], in: agent.directory)
        #expect(after.stdout.contains("agent pid \(pid)"), "\(after.stdout)\(after.stderr)")
        let validated = try runProgram("validate-settings", ["-C", agent.subfolder, "--no-build"], in: elsewhere)
        #expect(validated.status == 0, "\(validated.stdout)\(validated.stderr)")
        let stopped = try runProgram("agent-control", ["stop", "-C", agent.directory], in: elsewhere)
        #expect(stopped.status == 0, "\(stopped.stdout)\(stopped.stderr)")
        #expect(Self.exits(pid))

        let missing = try runProgram("agent-control", ["-C", elsewhere + "/nonexistent", "status"], in: elsewhere)
        #expect(missing.status == 64)
        #expect(missing.stderr.contains("-C \(elsewhere)/nonexistent: cannot change to that folder: No such file or directory"), "\(missing.stderr)")
    }

    @Test func withoutSettingsHereOrAboveEveryCommandSaysSoAndFails() throws {
        let empty = TestPaths.temporaryDirectory("nosettings")
        for arguments in [["stop"], ["status"], ["reload"], ["events"], ["history"], ["validate", "--no-build"], ["console", "--no-build"], ["start", "--no-build"]] {
            let result = try runProgram("agent-control", arguments, in: empty)
            #expect(result.status == 2, "\(arguments): \(result.status) \(result.stdout)\(result.stderr)")
            #expect(result.stderr.contains("no settings.json here (\(empty)) or in any parent folder; pass --settings FILE or -C AGENT_FOLDER, or create an agent with create-agent"),
                    "\(arguments): \(result.stdout)\(result.stderr)")
        }
        // A --settings that names no file is not an agent that is "not running".
        for arguments in [["stop"], ["status"], ["process", "stop", "x"]] {
            let result = try runProgram("agent-control", arguments + ["--settings", "elsewhere/settings.json"], in: empty)
            #expect(result.status == 2, "\(arguments): \(result.stdout)\(result.stderr)")
            #expect(result.stderr.contains("\(empty)/elsewhere/settings.json: no such settings file"), "\(result.stderr)")
        }
        let validate = try runProgram("validate-settings", ["--no-build"], in: empty)
        #expect(validate.status == 2)
        #expect(validate.stderr.contains("no settings.json here"))
    }

    @Test func explicitSettingsTakePrecedenceOverTheNearestOne() throws {
        let agent = try Agent()
        // The current folder has invalid settings of its own; --settings names the valid ones.
        let other = TestPaths.temporaryDirectory("other")
        try #"{"enabled_modules": ["sample"], "processes": {"x": {"type": "nope"}}}"#.write(toFile: other + "/settings.json", atomically: true, encoding: .utf8)
        let here = try runProgram("validate-settings", ["--no-build"], in: other)
        #expect(here.status == 2)
        let given = try runProgram("validate-settings", ["--no-build", "--settings", agent.settings], in: other)
        #expect(given.status == 0, "\(given.stdout)\(given.stderr)")
        let relative = try runProgram("validate-settings", ["--no-build", "-C", agent.directory, "--settings", "settings.json"], in: other)
        #expect(relative.status == 0, "\(relative.stdout)\(relative.stderr)")
    }

    @Test func scaffoldingCommandsTakeDashC() throws {
        let parent = TestPaths.temporaryDirectory("scaffold")
        let elsewhere = TestPaths.temporaryDirectory("elsewhere")
        let created = try runProgram("create-agent", ["-C", parent, "station"], in: elsewhere)
        #expect(created.status == 0, "\(created.stderr)")
        #expect(FileManager.default.fileExists(atPath: parent + "/station/settings.json"))
        let added = try runProgram("add-agent-module", ["-C", parent + "/station", "weather", "--empty"], in: elsewhere)
        #expect(added.status == 0, "\(added.stderr)")
        #expect(FileManager.default.fileExists(atPath: parent + "/station/modules/weather"))
        #expect(!FileManager.default.fileExists(atPath: elsewhere + "/modules"))
        let missing = try runProgram("add-agent-module", ["-C", elsewhere + "/nonexistent", "weather"], in: elsewhere)
        #expect(missing.status == 1)
        #expect(missing.stderr.contains("\(elsewhere)/nonexistent: -C: cannot change to that folder: No such file or directory"), "\(missing.stderr)")
    }
}
