import AgentTestSupport
import Foundation
import Testing

/// `create-agent` never writes a file or folder that group or others may write, whatever the
/// umask: under `umask 000` it wrote a world-writable `settings.json` (which decides what code
/// the agent loads) and world-writable folders.
@Suite(.ownThreads) struct ScaffoldingModeTests {
    private func mode(_ path: String) -> mode_t? {
        var info = stat()
        return lstat(path, &info) == 0 ? info.st_mode & 0o7777 : nil
    }

    /// Runs create-agent with `umask`, as a careless (or careful) shell would.
    private func createAgent(_ directory: String, umask: String) throws -> ProgramResult {
        let quoted = [TestPaths.products + "/create-agent", directory].map { "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" }
        return try runProgram("/bin/sh", ["-c", "umask \(umask); exec " + quoted.joined(separator: " ")])
    }

    @Test func underUmaskZeroNothingCreatedIsWritableByOthers() throws {
        let directory = TestPaths.temporaryDirectory("scaffold-umask") + "/agent"
        let created = try createAgent(directory, umask: "000")
        #expect(created.status == 0, "\(created.stderr)")
        #expect(mode(directory + "/settings.json") == 0o644)
        #expect(mode(directory) == 0o755)
        #expect(mode(directory + "/modules") == 0o755)
        let walker = try #require(FileManager.default.enumerator(atPath: directory))
        var checked = 0
        while let relative = walker.nextObject() as? String {
            let found = try #require(mode(directory + "/" + relative))
            #expect(found & 0o022 == 0, "\(relative): \(String(found, radix: 8))")
            checked += 1
        }
        #expect(checked >= 5)
    }

    @Test func aStricterUmaskIsKept() throws {
        let directory = TestPaths.temporaryDirectory("scaffold-umask") + "/agent"
        let created = try createAgent(directory, umask: "077")
        #expect(created.status == 0, "\(created.stderr)")
        #expect(mode(directory + "/settings.json") == 0o600)
        #expect(mode(directory + "/modules") == 0o700)
    }
}
