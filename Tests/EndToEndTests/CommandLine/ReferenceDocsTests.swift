import AgentTestSupport
import Foundation
import Testing

/// `agent-control docs`: one command writes every reference of docs/reference from the code;
/// docs/reference/cli.md is what the tools' own argument parsers say.
@Suite(.ownThreads) struct ReferenceDocsTests {
    static let names = ["cli.md", "events.md", "http-api.md", "metrics.md", "openapi.json", "settings.md"]

    @Test func theCheckedInCLIReferenceIsWhatTheToolsSay() throws {
        let result = try runProgram("agent-control", ["docs", "--check", TestPaths.repository + "/docs/reference", "--only", "cli.md"],
                                    in: TestPaths.temporaryDirectory("docs-cli"))
        #expect(result.status == 0, "docs/reference/cli.md is stale: run `\(CheckedInReference.regenerate)` and commit it. \(result.stderr)")
    }

    /// The one command writes all six into an empty folder, the same as the checked-in ones,
    /// and a second run gives the same bytes (no date, no path of the machine).
    @Test func docsWriteMakesEveryReferenceAsCheckedIn() throws {
        let folder = TestPaths.temporaryDirectory("docs-write")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let written = try runProgram("agent-control", ["docs", "--write", folder + "/reference"], in: folder)
        #expect(written.status == 0, "\(written.stderr)")
        let files = try FileManager.default.contentsOfDirectory(atPath: folder + "/reference").sorted()
        #expect(files == Self.names)
        for name in files {
            let made = FileManager.default.contents(atPath: folder + "/reference/" + name)
            let checkedIn = FileManager.default.contents(atPath: TestPaths.repository + "/docs/reference/" + name)
            #expect(made == checkedIn, "docs/reference/\(name) is stale: run `\(CheckedInReference.regenerate)` and commit it")
            #expect(!String(decoding: made ?? Data(), as: UTF8.self).contains(TestPaths.products), "\(name) names a path of this machine")
        }
        let check = try runProgram("agent-control", ["docs", "--check", folder + "/reference"], in: folder)
        #expect(check.status == 0, "\(check.stderr)")
    }

    @Test func docsCheckNamesAStaleFileAndTheCommandThatMendsIt() throws {
        let folder = TestPaths.temporaryDirectory("docs-stale")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        #expect(try runProgram("agent-control", ["docs", "--write", folder, "--only", "metrics.md"], in: folder).status == 0)
        try Data("# old\n".utf8).write(to: URL(fileURLWithPath: folder + "/metrics.md"))
        let check = try runProgram("agent-control", ["docs", "--check", folder, "--only", "metrics.md"], in: folder)
        #expect(check.status == 1)
        #expect(check.stderr.contains("metrics.md: not what the code generates now; run `agent-control docs --write docs/reference`"), "\(check.stderr)")
    }
}
