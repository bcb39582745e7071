import Foundation
import Testing
@testable import AgentRuntime

/// The store on a disk that fills up for real: a small tmpfs (mounting one needs root, as in
/// the test container; elsewhere the test is skipped and says why).
@Suite(.ownThreads, .serialized) struct DiskFullTests {
    /// Whether this process may mount a tmpfs.
    static let canMountTmpfs: Bool = {
        let probe = TestPaths.temporaryDirectory("mount-probe")
        defer { try? FileManager.default.removeItem(atPath: probe) }
        guard (try? runProgram("/bin/mount", ["-t", "tmpfs", "-o", "size=64k", "tmpfs", probe]))?.status == 0 else { return false }
        _ = try? runProgram("/bin/umount", [probe])
        return true
    }()

    /// Mounts a tmpfs of `size` on `path` (a new folder). Throws, saying why, where mounting is
    /// not permitted: a test of a full disk that cannot fill one fails rather than passes.
    static func mountTmpfs(size: String, on path: String) throws {
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        let mounted = try runProgram("/bin/mount", ["-t", "tmpfs", "-o", "size=\(size)", "tmpfs", path])
        guard mounted.status == 0 else {
            throw HTTPProbe.Failure(description: "cannot mount a tmpfs on \(path) (this test needs root to fill a disk): \(mounted.stderr)")
        }
    }

    /// Writes to `path` until the disk is full.
    static func fill(_ path: String) -> Int {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        defer { close(fd) }
        let block = [UInt8](repeating: 0x5A, count: 64 << 10)
        var total = 0
        while true {
            let n = block.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            if n <= 0 { return total }
            total += n
        }
    }

    @Test(.enabled(if: canMountTmpfs, "mounting a tmpfs needs root"))
    func aProcessSavingStateOnAFullDiskKeepsRunningAndSavesAgainOnceThereIsRoom() throws {
        let directory = TestPaths.temporaryDirectory("disk-full")
        let disk = directory + "/disk"
        try FileManager.default.createDirectory(atPath: disk, withIntermediateDirectories: true)
        #expect(try runProgram("/bin/mount", ["-t", "tmpfs", "-o", "size=8m", "tmpfs", disk]).status == 0)
        defer {
            _ = try? runProgram("/bin/umount", ["-l", disk])
            try? FileManager.default.removeItem(atPath: directory)
        }
        let agent = try AgentRun(settings: """
        {"enabled_modules": ["faults"], "store": {"path": "\(disk)/agent.sqlite"}, "processes": {
          "tick": {"type": "fault", "tick_ms": 50},
          "saver": {"type": "slow_sink", "delay_ms": 0, "save_state": true}}}
        """, arguments: ["--no-build", "--quiet"], directory: directory)
        #expect(agent.waitForLine(onStderr: true) { $0.contains("[saver] saved 10") } != nil, "\(agent.transcript)")

        // The disk fills up: saves are refused, the module is told and goes on.
        let filler = disk + "/filler"
        #expect(Self.fill(filler) > 0)
        let refused = agent.waitForLine(onStderr: true, timeout: 30) { $0.contains("[saver] not saved") }
        #expect(refused?.contains("the state was not saved: the agent's store cannot write now") == true, "\(agent.transcript)")
        #expect(agent.stderrLines.contains { $0.contains("store: cannot write to") && $0.contains("full") }, "\(agent.transcript)")
        Thread.sleep(forTimeInterval: 1)
        let status = try JSONSerialization.jsonObject(with: Data(runProgram("agent-control", ["status", "--json", "--settings", agent.settingsFile]).stdout.utf8)) as? [String: Any]
        let saver = (status?["processes"] as? [[String: Any]])?.first { $0["name"] as? String == "saver" }
        #expect(saver?["state"] as? String == "running", "\(String(describing: saver))\n\(agent.transcript)")
        #expect(saver?["restarts"] as? Int == 0, "\(String(describing: saver))")
        #expect(!agent.stderrLines.contains { $0.contains("[saver] worker pid") }, "the saver died on a full disk\n\(agent.transcript)")

        // Room again: the next saves are stored.
        let linesBefore = agent.stderrLines.count
        try FileManager.default.removeItem(atPath: filler)
        let deadline = Date().addingTimeInterval(30)
        var savedAgain: String?
        while savedAgain == nil, Date() < deadline {
            savedAgain = agent.stderrLines.dropFirst(linesBefore).first { $0.contains("[saver] saved ") }
            Thread.sleep(forTimeInterval: 0.05)
        }
        #expect(savedAgain != nil, "no save succeeded after the disk had room again\n\(agent.transcript)")
        #expect(agent.stderrLines.contains { $0.contains("store: writing again") }, "\(agent.transcript)")
        #expect(agent.stop() == 0)
    }
}
