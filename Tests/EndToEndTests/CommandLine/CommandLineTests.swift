@testable import AgentBase
import AgentTestSupport
import Foundation
import Testing

/// Exit statuses, `--version`, `restart`'s options and misspelled commands, as a user meets them.
@Suite(.ownThreads, .serialized) struct CommandLineTests {
    static let valid = #"{"enabled_modules": ["sample"], "processes": {"trades": {"type": "trade_feed", "interval": 0.2}}}"#

    private func agentFolder(_ settings: String = valid) throws -> String {
        let directory = TestPaths.temporaryDirectory("cli")
        try settings.write(toFile: directory + "/settings.json", atomically: true, encoding: .utf8)
        return directory
    }

    @Test func startExitsTwoForInvalidSettingsAsConsoleDoes() throws {
        let directory = try agentFolder(#"{"enabled_modules": ["sample"], "processes": {"t": {"type": "trade_feed", "interval": "fast"}}}"#)
        let console = try runProgram("agent-control", ["console", "--no-build"], in: directory)
        #expect(console.status == 2, "\(console.stderr)")
        let start = try runProgram("agent-control", ["start", "--no-build"], in: directory)
        #expect(start.status == 2, "\(start.stderr)")
        #expect(start.stderr.contains("/processes/t/interval"), "\(start.stderr)")
        let validate = try runProgram("validate-settings", ["--no-build"], in: directory)
        #expect(validate.status == 2)
    }

    @Test func commandsThatNeedARunningAgentExitThreeWhenItIsNot() throws {
        let directory = try agentFolder()
        for arguments in [["status"], ["reload"], ["process", "stop", "trades"], ["chat", "hello"]] {
            let result = try runProgram("agent-control", arguments, in: directory)
            #expect(result.status == 3, "\(arguments): \(result.stdout)\(result.stderr)")
            #expect((result.stdout + result.stderr).contains("not running"))
        }
        let stop = try runProgram("agent-control", ["stop"], in: directory)
        #expect(stop.status == 0)
        #expect(stop.stdout.contains("not running"))
    }

    @Test func everyCommandPrintsTheSameVersion() throws {
        let folder = TestPaths.temporaryDirectory("version")
        var versions: Set<String> = []
        for (program, arguments) in [("agent-control", ["--version"]), ("agent-control", ["status", "--version"]), ("agent-worker", ["--version"]),
                                     ("validate-settings", ["--version"]), ("create-agent", ["--version"]), ("add-agent-module", ["--version"]),
                                     ("agent-bench", ["--version"])] {
            let result = try runProgram(program, arguments, in: folder)
            #expect(result.status == 0, "\(program) \(arguments): \(result.stderr)")
            let line = result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
            #expect(line.hasPrefix(program + " "), "\(program): \(line)")
            versions.insert(String(line.dropFirst(program.count + 1)))
        }
        #expect(versions.count == 1, "\(versions)")
        #expect(versions.first?.split(separator: ".").count == 3)
    }

    @Test func diagnosticsOverHTTPShowTheVersionTheCommandsPrint() throws {
        let printed = try runProgram("agent-control", ["--version"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let agent = try HTTPAgent()
        defer { _ = agent.run.stop() }
        let reply = try agent.request("GET", "/api/diagnostics")
        #expect(reply.status == 200, "\(reply.body)")
        let body = try #require(try JSONSerialization.jsonObject(with: Data(reply.body.utf8)) as? [String: Any])
        let runtime = try #require((body["versions"] as? [String: Any])?["agent_runtime"] as? String, "\(reply.body)")
        #expect("agent-control \(runtime)" == printed)
    }

    @Test func restartTakesTheOptionsOfStart() throws {
        let directory = try agentFolder()
        defer { _ = try? runProgram("agent-control", ["stop", "--timeout", "20"], in: directory) }
        let started = try runProgram("agent-control", ["start", "--no-build", "--events", "--log-level", "debug"], in: directory)
        #expect(started.status == 0, "\(started.stderr)")
        let restarted = try runProgram("agent-control", ["restart", "--no-build", "--events", "--log-level", "debug", "--skip-invalid"], in: directory)
        #expect(restarted.status == 0, "\(restarted.stderr)")
        #expect(restarted.stdout.contains("started: pid "), "\(restarted.stdout)")
        // --events: the restarted agent logs its events.
        let deadline = Date().addingTimeInterval(30)
        var log = ""
        while Date() < deadline, !log.contains("trades → trade") {
            Thread.sleep(forTimeInterval: 0.1)
            log = (try? String(contentsOfFile: directory + "/.agent/log/agent.log", encoding: .utf8)) ?? ""
        }
        #expect(log.contains("trades → trade"))
    }

    @Test func misspelledCommandGetsASuggestion() throws {
        let folder = TestPaths.temporaryDirectory("usage")
        let result = try runProgram("agent-control", ["stauts"], in: folder)
        #expect(result.status == 64)
        #expect(result.stderr.contains("'stauts' is not a command of agent-control; did you mean 'status'?"), "\(result.stderr)")
        let far = try runProgram("agent-control", ["frobnicate"], in: folder)
        #expect(far.status == 64)
        #expect(!far.stderr.contains("did you mean"))
        #expect(far.stderr.contains("commands: console, start, stop, restart, status"))
        let action = try runProgram("agent-control", ["process", "strat", "trades"], in: folder)
        #expect(action.status == 64)
        #expect(action.stderr.contains("the action must be start, stop or restart, not \"strat\"; did you mean 'start'?"), "\(action.stderr)")
    }

    /// Two starts at once: one starts the agent, the other says why it did not, without
    /// passing off the winner's log as its own failure.
    @Test func concurrentStartsSayAnotherStartIsInProgressOrTheAgentRuns() throws {
        let directory = try agentFolder()
        defer { _ = try? runProgram("agent-control", ["stop", "--timeout", "20"], in: directory) }
        let results = LockedResults()
        let threads = (0..<3).map { _ in
            Thread { results.append(try? runProgram("agent-control", ["start", "--no-build"], in: directory)) }
        }
        threads.forEach { $0.start() }
        while results.count < 3 { Thread.sleep(forTimeInterval: 0.05) }
        let all = results.all
        #expect(all.filter { $0.status == 0 }.count == 1, "\(all.map { "\($0.status) \($0.stdout)\($0.stderr)" })")
        let pid = Pidfile.holder(of: directory + "/.agent/run/agent.pid")
        for loser in all where loser.status != 0 {
            #expect(loser.status == 1)
            #expect(!loser.stderr.contains("did not start"), "\(loser.stderr)")
            let inProgress = loser.stderr.contains("another start of this agent is in progress (agent-control start, pid ")
            let running = pid.map { loser.stderr.contains("the agent is already running (pid \($0),") } ?? false
            #expect(inProgress || running, "\(loser.stderr)")
        }
    }
}

final class LockedResults: @unchecked Sendable {
    private let lock = NSLock()
    private var results: [ProgramResult?] = []
    func append(_ result: ProgramResult?) { lock.withLock { results.append(result) } }
    var count: Int { lock.withLock { results.count } }
    var all: [ProgramResult] { lock.withLock { results.compactMap { $0 } } }
}
