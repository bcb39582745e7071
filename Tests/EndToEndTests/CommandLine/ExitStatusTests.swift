import AgentTestSupport
import Foundation
import Testing

/// One table of exit statuses for every command of agent-control, in every `--help`; a
/// misspelled command at any level named with the closest one; usage errors exit 64 whoever
/// finds them; a message says a thing once.
@Suite(.ownThreads) struct ExitStatusTests {
    private func control(_ arguments: [String], in directory: String = TestPaths.temporaryDirectory("exit-status")) throws -> ProgramResult {
        try runProgram("agent-control", arguments, in: directory)
    }

    @Test func everyHelpEndsWithTheSameTableOfExitStatuses() throws {
        var tables: Set<String> = []
        for arguments in [["--help"], ["task", "--help"], ["task", "run", "--help"], ["status", "--help"], ["schedule", "next", "-h"],
                          ["help", "workflow", "runs"], ["settings", "add-process", "--help"]] {
            let help = try control(arguments)
            #expect(help.status == 0, "\(arguments): \(help.stderr)")
            let table = try #require(help.stdout.range(of: "EXIT STATUS (every command):").map { String(help.stdout[$0.lowerBound...]) },
                                     "\(arguments) shows no exit statuses:\n\(help.stdout)")
            for code in ["0", "1", "2", "3", "64"] {
                #expect(table.contains("\n  \(code) "), "\(arguments): no \(code) in\n\(table)")
            }
            tables.insert(table)
            // No command lists codes of its own besides the table (the root's discussion states it once).
            #expect(arguments == ["--help"] || !help.stdout.contains("Exit status"), "\(arguments):\n\(help.stdout)")
        }
        #expect(tables.count == 1, "\(tables)")
    }

    @Test func aMisspelledCommandAtAnyLevelExitsSixtyFourNamingTheClosestOne() throws {
        for (arguments, wanted) in [(["stauts"], "'stauts' is not a command of agent-control; did you mean 'status'?"),
                                    (["task", "rnu", "backup"], "'rnu' is not a command of agent-control task; did you mean 'run'?"),
                                    (["-C", "/tmp", "workflow", "shwo", "x"], "'shwo' is not a command of agent-control workflow; did you mean 'show'?"),
                                    (["schedule", "histroy", "x"], "'histroy' is not a command of agent-control schedule; did you mean 'history'?"),
                                    (["help", "nosuch"], "'nosuch' is not a command of agent-control"),
                                    (["help", "task", "rnu"], "'rnu' is not a command of agent-control task; did you mean 'run'?")] {
            let result = try control(arguments)
            #expect(result.status == 64, "\(arguments): \(result.status) \(result.stdout)\(result.stderr)")
            #expect(result.stderr.contains(wanted), "\(arguments): \(result.stderr)")
            #expect(result.stdout.isEmpty, "\(arguments): \(result.stdout)")
        }
        // What the hints stop at: a command's own arguments, and options.
        let help = try control(["help", "task", "run"])
        #expect(help.status == 0 && help.stdout.contains("USAGE: agent-control task run"), "\(help.stdout)\(help.stderr)")
    }

    @Test func aBadArgumentIsAUsageErrorWhetherTheAgentRunsOrNot() throws {
        let directory = TestPaths.temporaryDirectory("exit-status-usage")
        try #"{"enabled_modules": [], "processes": {}}"#.write(toFile: directory + "/settings.json", atomically: true, encoding: .utf8)
        // --at is checked as the agent checks it, before anything is sent.
        let at = try control(["task", "run", "backup", "--at", "tomorrow"], in: directory)
        #expect(at.status == 64, "\(at.stdout)\(at.stderr)")
        #expect(at.stderr.contains(#"--at must be an ISO 8601 time"#) && at.stderr.contains(#"not "tomorrow""#), "\(at.stderr)")
        // Its help states the range it refuses beyond (it said only "ISO 8601 or a delay").
        let help = try control(["task", "run", "--help"], in: directory)
        let words = help.stdout.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        #expect(words.contains("--at <at> Not before this time: an ISO 8601 time from 1970-01-01T00:00:00Z to 100 years from now"), "\(help.stdout)")
        #expect(words.contains("or a delay from now of at most 100 years (30s, 10m, 2h, 1d)"), "\(help.stdout)")
        let far = try control(["task", "run", "backup", "--at", "36600d"], in: directory)
        #expect(far.status == 64 && far.stderr.contains("at most 100 years"), "\(far.stderr)")
        for arguments in [["schedule", "next", "61 * * * *"], ["schedule", "next", "0 3 * * *", "--timezone", "Mars/Olympus_Mons"]] {
            let result = try control(arguments, in: directory)
            #expect(result.status == 64, "\(arguments): \(result.stderr)")
        }
        // Found while the command runs (the file is read then): its usage, not agent-control's.
        let input = try control(["task", "run", "backup", "--input", "@/nonexistent/input.json"], in: directory)
        #expect(input.status == 64 && input.stderr.contains("Usage: agent-control task run"), "\(input.stderr)")
        // The bounds every front takes (the API refused 20000, the command line read it).
        for command in ["events", "history"] {
            let result = try control([command, "--limit", "20000"], in: directory)
            #expect(result.status == 64 && result.stderr.contains("--limit must be 1 to 10000, not 20000"), "\(command): \(result.stderr)")
        }
    }

    /// An error that repeats what it refuses shows the controls in it, not obeys them (a right-
    /// to-left override turned the rest of the line around). The agent's refusals are printed
    /// by the same `TerminalStyle.printError`.
    @Test func anErrorShowsTheControlsOfWhatItRepeats() throws {
        let directory = TestPaths.temporaryDirectory("exit-status-controls")
        try #"{"enabled_modules": [], "processes": {}, "tasks": {"job": {"type": "command", "command": ["/bin/true"]}}}"#
            .write(toFile: directory + "/settings.json", atomically: true, encoding: .utf8)
        let result = try control(["events", "--since", "s\u{202E}ch\u{1B}[2J"], in: directory)
        #expect(result.status == 64)
        #expect(!result.stderr.contains("\u{202E}") && !result.stderr.contains("\u{1B}"), "\(result.stderr.debugDescription)")
        #expect(result.stderr.contains("s\\u{202E}ch\\u{1B}[2J"), "\(result.stderr.debugDescription)")
    }

    /// `console` parses its own arguments without the whole command tree (a faster start):
    /// what it cannot take is said as for every command, naming `agent-control console`.
    @Test func consoleArgumentsItCannotTakeAreUsageErrorsOfAgentControlConsole() throws {
        let directory = TestPaths.temporaryDirectory("exit-status-console")
        for (arguments, wanted) in [(["console", "--bogus"], "Error: Unknown option '--bogus'"),
                                    (["console", "--log-level", "loud"], "--log-level must be one of trace, debug"),
                                    (["console", "--configuration", "fast"], "--configuration must be debug or release, not \"fast\""),
                                    (["console", "extra"], "Error: Unexpected argument 'extra'")] {
            let result = try control(arguments, in: directory)
            #expect(result.status == 64, "\(arguments): \(result.status) \(result.stderr)")
            #expect(result.stderr.contains(wanted), "\(arguments): \(result.stderr)")
            #expect(result.stderr.contains("Usage: agent-control console "), "\(arguments): \(result.stderr)")
        }
        let help = try control(["console", "--help"], in: directory)
        #expect(help.status == 0 && help.stdout.contains("USAGE: agent-control console") && help.stdout.contains("EXIT STATUS (every command):"), "\(help.stdout)")
        // Parsed alone, a run that cannot start still says why with the launcher's status.
        let none = try control(["console", "--no-build"], in: directory)
        #expect(none.status == 2 && none.stderr.contains("no settings.json here"), "\(none.status) \(none.stderr)")
    }

    @Test func statusOfAnAgentThatIsNotRunningSaysSoOnce() throws {
        let directory = TestPaths.temporaryDirectory("exit-status-status")
        try #"{"enabled_modules": [], "processes": {}}"#.write(toFile: directory + "/settings.json", atomically: true, encoding: .utf8)
        let status = try control(["status"], in: directory)
        #expect(status.status == 3)
        let said = status.stdout + status.stderr
        #expect(said.components(separatedBy: "not running").count == 2, "\(said)")
        #expect(said.hasPrefix("the agent is not running ("), "\(said)")
    }
}
