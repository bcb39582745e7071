import AgentTestSupport
import Foundation
import Testing

/// What a person at a terminal sees: log levels, alerts and errors in colour on a terminal only
/// (not with NO_COLOR, not with --no-color, not into a pipe), and one time format on a screen.
@Suite(.ownThreads, .serialized) struct TerminalOutputTests {
    /// A feed fast enough that the monitor's warning (an alert) comes within a second.
    static let alertingAgent = """
    {"enabled_modules": ["sample"],
     "processes": {
       "trades": {"type": "trade_feed", "pairs": ["ETH/USD"], "interval": 0.02, "seed": 1},
       "busy": {"type": "trade_frequency", "window": 30, "threshold": 5}
     }}
    """
    static let escape = "\u{1B}["

    private func agentFolder() throws -> String {
        let directory = TestPaths.temporaryDirectory("terminal")
        try Self.alertingAgent.write(toFile: directory + "/settings.json", atomically: true, encoding: .utf8)
        return directory
    }

    /// `console` on a terminal until the alert and an event line are shown.
    private func console(_ extra: [String] = [], environment: [String: String] = [:]) throws -> String {
        try runOnTerminal("agent-control", ["console", "--no-build"] + extra, in: try agentFolder(), environment: environment) {
            $0.contains("ETH/USD: 6 trade events") && $0.contains("trades → trade")
        }
    }

    @Test func consoleOnATerminalColoursLevelsAndAlerts() throws {
        let screen = try console()
        #expect(screen.contains("ETH/USD: 6 trade events"), "\(screen)")
        // The level of a log line (info in green) and the monitor's warning (in yellow).
        #expect(screen.contains("\(Self.escape)32minfo\(Self.escape)0m"), "\(screen)")
        #expect(screen.contains("busy \(Self.escape)33mALERT[warning]:\(Self.escape)0m ETH/USD"), "\(screen)")
    }

    @Test func noColorAndTheNoColorFlagTurnColoursOffOnATerminal() throws {
        for (arguments, environment) in [([String](), ["NO_COLOR": "1"]), (["--no-color"], [:])] {
            let screen = try console(arguments, environment: environment)
            #expect(screen.contains("ALERT[warning]:"), "\(arguments) \(environment): \(screen)")
            #expect(!screen.contains(Self.escape), "\(arguments) \(environment): \(screen)")
        }
        // NO_COLOR set but empty does not count (no-color.org).
        let screen = try console(environment: ["NO_COLOR": ""])
        #expect(screen.contains(Self.escape), "\(screen)")
    }

    @Test func errorsAreRedOnATerminalAndPlainInAPipe() throws {
        // A folder without settings.json: `status` fails with "error: no settings.json here …".
        let folder = TestPaths.temporaryDirectory("nosettings")
        let screen = try runOnTerminal("agent-control", ["status"], in: folder)
        #expect(screen.contains("\(Self.escape)1;31merror:\(Self.escape)0m no settings.json here"), "\(screen)")
        let flagged = try runOnTerminal("agent-control", ["status", "--no-color"], in: folder)
        #expect(flagged.contains("error: no settings.json here") && !flagged.contains(Self.escape), "\(flagged)")
        let piped = try runProgram("agent-control", ["status"], in: folder)
        #expect(piped.status == 2)
        #expect(piped.stderr.contains("error: no settings.json here") && !piped.stderr.contains(Self.escape), "\(piped.stderr)")
        // The hint for a misspelled command too.
        let misspelled = try runOnTerminal("agent-control", ["stauts"], in: folder)
        #expect(misspelled.contains("\(Self.escape)1;31merror:\(Self.escape)0m 'stauts' is not a command"), "\(misspelled)")
        let plain = try runOnTerminal("agent-control", ["stauts", "--no-color"], in: folder)
        #expect(plain.contains("error: 'stauts' is not a command") && !plain.contains(Self.escape), "\(plain)")
    }

    @Test func logLinesAndEventLinesShowTheTimeTheSameWay() throws {
        let agent = try AgentRun(settings: Self.alertingAgent, arguments: ["--no-build"])
        defer { _ = agent.stop() }
        let event = try #require(agent.waitForLine { $0.contains("trades → trade") }, "\(agent.transcript)")
        let alert = try #require(agent.waitForLine { $0.contains("ALERT[warning]:") }, "\(agent.transcript)")
        let log = try #require(agent.waitForLine(onStderr: true) { $0.contains("[trades] ready in") }, "\(agent.transcript)")
        let time = #/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z /#
        for line in [event, alert, log] {
            #expect(line.firstMatch(of: time) != nil, "\(line)")
            #expect(!line.contains(Self.escape), "not a terminal: \(line)")
        }
    }
}
