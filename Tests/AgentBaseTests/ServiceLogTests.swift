@testable import AgentBase
import AgentTestSupport
import Foundation
import JSONSchema
import Testing

/// The agent's own log as a service needs it: a detached agent's file rotated by size and
/// reopened on SIGUSR1, and journal-style lines when stderr is systemd's journal stream.
@Suite(.ownThreads, .serialized) struct ServiceLogTests {
    static func settings(log: String) -> String {
        """
        {"enabled_modules": ["sample"], \(log)"processes": {
          "trades": {"type": "trade_feed", "interval": 0.01}}}
        """
    }

    final class Detached {
        let directory = TestPaths.temporaryDirectory("servicelog")
        var settings: String { directory + "/settings.json" }
        var log: String { directory + "/.agent/log/agent.log" }

        init(_ text: String) throws { try text.write(toFile: settings, atomically: true, encoding: .utf8) }
        deinit { _ = try? control(["stop", "--timeout", "20"]) }

        @discardableResult
        func control(_ arguments: [String]) throws -> ProgramResult {
            try runProgram("agent-control", [arguments[0], "--settings", settings] + arguments.dropFirst())
        }

        var pid: Int32? {
            (try? String(contentsOfFile: directory + "/.agent/run/agent.pid", encoding: .utf8)).flatMap { Int32($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
        }

        func text(_ path: String) -> String { (try? String(contentsOfFile: path, encoding: .utf8)) ?? "" }

        func inode(_ path: String) -> UInt64? {
            var info = stat()
            return stat(path, &info) == 0 ? UInt64(info.st_ino) : nil
        }

        func wait(timeout: Double = 60, _ condition: () -> Bool) -> Bool {
            let deadline = Date().addingTimeInterval(timeout)
            while !condition() {
                if Date() > deadline { return false }
                Thread.sleep(forTimeInterval: 0.02)
            }
            return true
        }
    }

    @Test func detachedAgentsLogIsRotatedBySizeKeepingLogKeepFiles() throws {
        let agent = try Detached(Self.settings(log: #""log": {"max_bytes": 4096, "keep": 2}, "#))
        let started = try agent.control(["start", "--no-build", "--events"])
        #expect(started.status == 0, "\(started.stderr)")
        #expect(agent.wait { agent.inode(agent.log + ".2") != nil }, "no agent.log.2:\n\(agent.text(agent.log))")
        // Two more rotations past the point where `keep` files exist: the oldest goes each time.
        for _ in 0..<2 {
            let oldest = agent.inode(agent.log + ".2")
            #expect(agent.wait { agent.inode(agent.log + ".2") != oldest }, "no further rotation")
        }
        #expect(try agent.control(["stop"]).status == 0)
        #expect(!FileManager.default.fileExists(atPath: agent.log + ".3"))
        for file in [agent.log, agent.log + ".1", agent.log + ".2"] {
            let size = (try FileManager.default.attributesOfItem(atPath: file)[.size] as? Int) ?? -1
            #expect(size > 0 && size <= 4096, "\(file): \(size) bytes")
        }
        // Whole lines in every file: rotation happens between two lines.
        for file in [agent.log + ".1", agent.log + ".2"] {
            let text = agent.text(file)
            #expect(text.hasSuffix("\n"), "\(file) ends mid-line")
            // Each starts with a whole event line (they are the only lines written meanwhile).
            #expect(text.split(separator: "\n").first?.contains("trades → trade") == true, "\(file):\n\(text)")
        }
    }

    @Test func sigusr1AfterTheLogWasMovedOpensANewOne() throws {
        let agent = try Detached(Self.settings(log: ""))
        let started = try agent.control(["start", "--no-build", "--events"])
        #expect(started.status == 0, "\(started.stderr)")
        let pid = try #require(agent.pid)
        #expect(agent.wait { agent.text(agent.log).contains("→ trade") }, "\(agent.text(agent.log))")
        let moved = agent.log + ".moved"
        #expect(rename(agent.log, moved) == 0)
        #expect(kill(pid, SIGUSR1) == 0)
        #expect(agent.wait { agent.text(agent.log).contains("SIGUSR1 received; reopened the log file \(agent.log)") }, "\(agent.text(moved))")
        // The events go on in the new file, the agent runs on, and the moved file stays as it was.
        #expect(agent.wait { agent.text(agent.log).contains("→ trade") }, "\(agent.text(agent.log))")
        #expect(try agent.control(["status"]).status == 0)
        #expect(AgentRun.isAlive(pid))
        #expect(agent.text(moved).contains("agent in "))
        #expect(!agent.text(moved).contains("reopened"))
        #expect(try agent.control(["stop"]).status == 0)
    }

    @Test func underTheJournalLinesHavePriorityPrefixesAndNoTimestamps() throws {
        let settings = Self.settings(log: "")
        // systemd sets JOURNAL_STREAM to the device and inode of the stream it connects stderr to.
        let journal = try AgentRun(settings: settings, arguments: ["--no-build", "--quiet"],
                                   shell: "JOURNAL_STREAM=$(stat -L -c %d:%i /proc/self/fd/2); export JOURNAL_STREAM")
        defer { _ = journal.stop(signal: SIGKILL, timeout: 10) }
        let line = try #require(journal.waitForLine(onStderr: true) { $0.contains("agent in ") }, "\(journal.transcript)")
        #expect(line.hasPrefix("<6>agent in "), "\(line)")
        #expect(journal.stop() == 0)
        let lines = journal.stderrLines.filter { !$0.isEmpty }
        #expect(lines.contains { $0.hasPrefix("<5>SIGTERM received") }, "\(journal.transcript)")
        #expect(lines.allSatisfy { $0.range(of: #"^<[0-7]>"#, options: .regularExpression) != nil }, "\(journal.transcript)")
        #expect(!lines.contains { $0.range(of: #"\d{4}-\d\d-\d\dT\d\d:\d\d"#, options: .regularExpression) != nil }, "\(journal.transcript)")

        // stdout on the same stream (as systemd connects both): events and alerts too, an alert
        // at its level's priority.
        let alerts = """
        {"enabled_modules": ["sample"], "processes": {
          "trades": {"type": "trade_feed", "interval": 0.01},
          "busy": {"type": "trade_frequency", "window": 5, "threshold": 1}}}
        """
        let both = try AgentRun(settings: alerts, arguments: ["--no-build"],
                                shell: "exec 1>&2; JOURNAL_STREAM=$(stat -L -c %d:%i /proc/self/fd/2); export JOURNAL_STREAM")
        defer { _ = both.stop(signal: SIGKILL, timeout: 10) }
        let alert = try #require(both.waitForLine(onStderr: true) { $0.contains("ALERT[") }, "\(both.transcript)")
        #expect(alert.hasPrefix("<4>busy ALERT[warning]: "), "\(alert)")
        let event = try #require(both.waitForLine(onStderr: true) { $0.contains(" → ") }, "\(both.transcript)")
        #expect(event.hasPrefix("<6>trades → trade  {") || event.hasPrefix("<6>busy → "), "\(event)")
        #expect(both.stop() == 0)
        #expect(both.stderrLines.filter { !$0.isEmpty }.allSatisfy { $0.range(of: #"^<[0-7]>"#, options: .regularExpression) != nil }, "\(both.transcript)")

        // Another stream than the one JOURNAL_STREAM names (stderr redirected): plain lines.
        let plain = try AgentRun(settings: settings, arguments: ["--no-build", "--quiet"], environment: ["JOURNAL_STREAM": "1:1"])
        defer { _ = plain.stop(signal: SIGKILL, timeout: 10) }
        let plainLine = try #require(plain.waitForLine(onStderr: true) { $0.contains("agent in ") }, "\(plain.transcript)")
        #expect(!plainLine.hasPrefix("<"), "\(plainLine)")
        #expect(plainLine.range(of: #"\d\d:\d\d:\d\d"#, options: .regularExpression) != nil, "\(plainLine)")
        #expect(plain.stop() == 0)
    }

    @Test func logSettingsAreValidatedWithEveryErrorAndClampedWhenRead() throws {
        let directory = TestPaths.temporaryDirectory("logsettings")
        try #"{"enabled_modules": ["sample"], "log": {"max_bytes": 10, "keep": -1, "size": 1}, "processes": {}}"#
            .write(toFile: directory + "/settings.json", atomically: true, encoding: .utf8)
        let result = try runProgram("validate-settings", ["--settings", directory + "/settings.json", "--no-build"])
        #expect(result.status == 2, "\(result.stdout)\(result.stderr)")
        let output = result.stdout + result.stderr
        for pointer in ["/log/max_bytes", "/log/keep", "/log"] {
            #expect(output.contains("✗ \(pointer): "), "\(pointer) in\n\(output)")
        }
        #expect(output.contains("4096"), "\(output)")

        let huge = LogSettings(try JSONValue.parse(Data(#"{"max_bytes": 1e300, "keep": 1e20}"#.utf8)))
        #expect(huge.maximumBytes == SettingsBounds.largestFileBytes)
        #expect(huge.keep == SettingsBounds.mostRotatedFiles)
        let tiny = LogSettings(try JSONValue.parse(Data(#"{"max_bytes": -5, "keep": -3}"#.utf8)))
        #expect(tiny.maximumBytes == LogSettings.smallestFileBytes && tiny.keep == 0)
        #expect(LogSettings(nil) == LogSettings())
    }
}
