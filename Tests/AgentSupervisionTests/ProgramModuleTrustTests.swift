import AgentTestSupport
import Foundation
import Testing

/// A `jsonl/1` module's programs get the trust check a library gets, wherever its manifest's
/// command and the links in its folder lead: real files, real modes (the tests run as root).
@Suite(.ownThreads, .serialized) struct ProgramModuleTrustTests {
    /// An agent with module "esc" whose type "src" runs `command`, and a folder `open/` beside
    /// the agent's modules that everyone may write to (not sticky), holding `run.sh`.
    private struct Agent {
        let directory: String
        var open: String { directory + "/open" }

        init(command: String) throws {
            let manifest = #"{"name": "esc", "version": "1", "protocol": "jsonl/1", "process_types": {"src": {"kind": "datasource", "command": [\#(command)]}}}"#
            directory = try ProgramModuleFixture.write(name: "esc", manifest: manifest)
            try FileManager.default.createDirectory(atPath: open, withIntermediateDirectories: true)
            chmod(open, 0o777)
            try "#!/bin/sh\nread line\necho '{\"ready\": true}'\nexec sleep 1000\n".write(toFile: open + "/run.sh", atomically: true, encoding: .utf8)
            chmod(open + "/run.sh", 0o755)
            try #"{"enabled_modules": ["esc"], "processes": {"a": {"type": "src"}}}"#
                .write(toFile: directory + "/settings.json", atomically: true, encoding: .utf8)
        }

        func validate() throws -> ProgramResult {
            try runProgram("validate-settings", ["--settings", directory + "/settings.json", "--no-build"])
        }
    }

    @Test func aCommandLeadingOutOfTheModuleFolderToAFolderOthersCanWriteIsRefused() throws {
        let agent = try Agent(command: #""../../open/run.sh""#)
        let result = try agent.validate()
        #expect(result.status == 2, "\(result.stdout)\(result.stderr)")
        #expect(result.stdout.contains("refusing to load it: the folder \(agent.open) is writable by everyone (mode 777)"), "\(result.stdout)")
    }

    @Test func anAbsoluteCommandOthersCanChangeIsRefused() throws {
        let agent = try Agent(command: #""python3", "feed.py""#)
        let manifest = #"{"name": "esc", "version": "1", "protocol": "jsonl/1", "process_types": {"src": {"kind": "datasource", "command": ["\#(agent.open)/run.sh"]}}}"#
        try manifest.write(toFile: agent.directory + "/modules/esc/module.json", atomically: true, encoding: .utf8)
        chmod(agent.open, 0o755)
        chmod(agent.open + "/run.sh", 0o777)
        let result = try agent.validate()
        #expect(result.status == 2, "\(result.stdout)\(result.stderr)")
        #expect(result.stdout.contains("the file \(agent.open)/run.sh is writable by everyone (mode 777)"), "\(result.stdout)")
    }

    @Test func aLinkInTheModuleFolderToAProgramOthersCanChangeIsRefused() throws {
        let agent = try Agent(command: #""python3", "link.py""#)
        #expect(symlink(agent.open + "/run.sh", agent.directory + "/modules/esc/link.py") == 0)
        let result = try agent.validate()
        #expect(result.status == 2, "\(result.stdout)\(result.stderr)")
        #expect(result.stdout.contains("the folder \(agent.open) is writable by everyone"), "\(result.stdout)")
    }

    @Test func aSafeProgramOutsideTheModuleFolderIsAccepted() throws {
        let agent = try Agent(command: #""/bin/sh", "-c", "exit 0""#)
        let result = try agent.validate()
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
    }
}
