import AgentTestSupport
import Foundation
import Testing

/// scripts/man-pages.py on the commands built for the tests: the pages the Debian package and
/// scripts/install.sh ship, rendered by man as a reader would.
@Suite(.ownThreads) struct ManPageTests {
    static let commands = ["agent-control", "validate-settings", "create-agent", "add-agent-module", "agent-bench"]
    /// man-db's man (lintian needs it, and .ci/run installs lintian): there its absence fails.
    static let man = FileManager.default.isExecutableFile(atPath: "/usr/bin/man") ? "/usr/bin/man" : nil

    private func writePages() throws -> String {
        let folder = TestPaths.temporaryDirectory("man")
        let result = try runProgram("/usr/bin/env", ["python3", TestPaths.repository + "/scripts/man-pages.py",
                                                     "--build-dir", TestPaths.products, "--output", folder])
        guard result.status == 0 else { throw PackageTestFailure(description: "man-pages.py exited \(result.status): \(result.stderr)") }
        return folder
    }

    private func render(_ page: String) throws -> ProgramResult {
        // Under CI a missing man fails here rather than skipping the test.
        try runProgram(Self.man ?? "/usr/bin/man", ["--warnings", "-l", page], environment: ["MANWIDTH": "100", "MANPAGER": "cat", "PAGER": "cat"])
    }

    @Test(.enabled(if: man != nil || ProcessInfo.processInfo.environment["CI"] != nil, "man is not installed (apt-get install man-db)"))
    func everyPageRendersWithoutWarnings() throws {
        let folder = try writePages()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        for command in Self.commands {
            let rendered = try render(folder + "/\(command).1")
            #expect(rendered.status == 0, "\(command).1: man exited \(rendered.status)")
            #expect(rendered.stderr.isEmpty, "\(command).1 renders with warnings:\n\(rendered.stderr)")
            #expect(rendered.stdout.contains("EXIT STATUS"), "\(command).1 has no exit status section")
        }
    }

    @Test(.enabled(if: man != nil || ProcessInfo.processInfo.environment["CI"] != nil, "man is not installed (apt-get install man-db)"))
    func usageLinesNameSubcommandsOnlyWhereThereAreSome() throws {
        let folder = try writePages()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let validate = try render(folder + "/validate-settings.1").stdout
        let synopsis = try #require(section("SYNOPSIS", of: validate))
        #expect(synopsis.contains("validate-settings") && synopsis.contains("--settings"), "\(synopsis)")
        #expect(!synopsis.contains("subcommand"), "validate-settings has no subcommands, but its usage says so:\n\(synopsis)")
        let control = try render(folder + "/agent-control.1").stdout
        #expect(try #require(section("SYNOPSIS", of: control)).contains("subcommand"))
        // A subcommand's own usage line, with its argument and options.
        let commands = try #require(section("COMMANDS", of: control))
        #expect(commands.contains("agent-control task run name"), "\(commands.prefix(2000))")
    }

    @Test(.enabled(if: man != nil || ProcessInfo.processInfo.environment["CI"] != nil, "man is not installed (apt-get install man-db)"))
    func exitStatusListsTheCodesOfEveryCommand() throws {
        let folder = try writePages()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let control = try #require(section("EXIT STATUS", of: try render(folder + "/agent-control.1").stdout))
        #expect(!control.contains(">0 if an error occurs"), "the generic line instead of the codes:\n\(control)")
        // agent-control's one table, the same for every command, as every help ends with it.
        let flat = control.replacingOccurrences(of: #"\s+"#, with: " ", options: .regularExpression)
        for phrase in ["the same for every command", "0 success", "2 the settings or a module are invalid", "3 the agent is not running",
                       "64 usage error"] {
            #expect(flat.contains(phrase), "agent-control's EXIT STATUS lacks \"\(phrase)\":\n\(control)")
        }
        #expect(!flat.contains("Commands that say more"), "a command documents codes of its own:\n\(control)")
        let create = try #require(section("EXIT STATUS", of: try render(folder + "/create-agent.1").stdout))
        #expect(create.replacingOccurrences(of: #"\s+"#, with: " ", options: .regularExpression).contains("0 created"), "\(create)")
    }

    /// The text of a rendered page's section, up to the next heading.
    private func section(_ name: String, of page: String) -> String? {
        let lines = page.components(separatedBy: "\n")
        guard let start = lines.firstIndex(of: name) else { return nil }
        let rest = lines[(start + 1)...]
        let end = rest.firstIndex { !$0.isEmpty && !$0.hasPrefix(" ") } ?? lines.endIndex
        return lines[(start + 1)..<end].joined(separator: "\n")
    }
}
