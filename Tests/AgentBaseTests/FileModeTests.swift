@testable import AgentBase
import AgentTestSupport
import Foundation
import Testing

/// The runtime's folders and files get fixed modes whatever the umask: run with `umask 000`,
/// nothing it creates is writable (or, but for the pidfile, readable) by others.
@Suite(.ownThreads, .serialized) struct FileModeTests {
    private func mode(_ path: String) -> mode_t? {
        var info = stat()
        return lstat(path, &info) == 0 ? info.st_mode & 0o7777 : nil
    }

    /// Runs agent-control with `umask 000`, as a careless shell would.
    private func agentControl(_ arguments: [String]) throws -> ProgramResult {
        let quoted = ([TestPaths.products + "/agent-control"] + arguments).map { "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" }
        return try runProgram("/bin/sh", ["-c", "umask 000; exec " + quoted.joined(separator: " ")])
    }

    @Test func agentStartedWithUmaskZeroCreatesPrivateFoldersAndFiles() throws {
        let directory = TestPaths.temporaryDirectory("umask")
        let settings = directory + "/settings.json"
        try """
        {"enabled_modules": ["sample"], "processes": {"trades": {"type": "trade_feed", "interval": 0.05}},
         "outputs": [{"type": "file", "path": "out/events.jsonl"}]}
        """.write(toFile: settings, atomically: true, encoding: .utf8)
        defer { _ = try? agentControl(["stop", "--settings", settings]) }
        let started = try agentControl(["start", "--settings", settings, "--no-build"])
        #expect(started.status == 0, "\(started.stderr)")
        // Wait for the store's WAL, written with the first events.
        let deadline = Date().addingTimeInterval(30)
        while mode(directory + "/.agent/data/agent.sqlite-wal") == nil, Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
        let expected: [(String, mode_t)] = [
            (".agent", 0o700), (".agent/run", 0o700), (".agent/log", 0o700), (".agent/data", 0o700), (".agent/cache", 0o700),
            (".agent/run/agent.pid", 0o644), (".agent/run/control.sock", 0o600), (".agent/run/workers", 0o600), (".agent/log/agent.log", 0o600),
            (".agent/data/agent.sqlite", 0o600), (".agent/data/agent.sqlite-wal", 0o600), (".agent/data/agent.sqlite-shm", 0o600),
            (".agent/cache/manifests.json", 0o600),
            ("out", 0o755), ("out/events.jsonl", 0o644),
        ]
        for (path, wanted) in expected {
            let found = mode(directory + "/" + path)
            #expect(found == wanted, "\(path): \(found.map { String($0, radix: 8) } ?? "missing"), expected \(String(wanted, radix: 8))")
        }
        let stopped = try agentControl(["stop", "--settings", settings])
        #expect(stopped.status == 0)
    }

    @Test func existingFoldersKeepTheirModesAndMissingOnesAreCreatedPrivate() throws {
        let directory = TestPaths.temporaryDirectory("private-files")
        chmod(directory, 0o755)
        try PrivateFiles.makeDirectories(directory + "/a/b/c")
        #expect(mode(directory) == 0o755)
        #expect(mode(directory + "/a") == 0o700)
        #expect(mode(directory + "/a/b/c") == 0o700)
        try PrivateFiles.write(Array("x".utf8), atomicallyTo: directory + "/a/file")
        #expect(mode(directory + "/a/file") == 0o600)
        #expect(try String(contentsOfFile: directory + "/a/file", encoding: .utf8) == "x")
        try "y".write(toFile: directory + "/plain", atomically: false, encoding: .utf8)
        #expect(throws: PrivateFiles.Failure.self) { try PrivateFiles.makeDirectories(directory + "/plain") }
    }
}
