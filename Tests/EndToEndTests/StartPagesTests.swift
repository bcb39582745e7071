import AgentCore
import AgentTestSupport
import Foundation
import Testing

/// agent-control gives back the code pages that only its start touched, once every first start
/// has settled, and each worker its own a second after its ready frame
/// (`AGENT_RELEASE_START_PAGES=0` keeps them); all run on.
@Suite(.ownThreads, .serialized) struct StartPagesTests {
    static let settings = """
    {"enabled_modules": ["sample"], "processes": {
      "trades": {"type": "trade_feed", "interval": 0.05},
      "busy": {"type": "trade_frequency", "window": 5, "threshold": 100}}}
    """

    /// RSS in kB of a process's private file mappings that were never written (code and
    /// constants, its executable's and its libraries'), from /proc/PID/smaps.
    static func codeResidentKB(of pid: Int32) throws -> Int {
        // ProcFile reads to the end: Foundation's String(contentsOfFile:) stops short on /proc.
        guard let smaps = ProcFile.read("/proc/\(pid)/smaps") else { throw POSIXError(.ENOENT) }
        var mapping: (rss: Int, anonymous: Int, code: Bool)?
        var total = 0
        func close() { if let mapping, mapping.code, mapping.anonymous == 0 { total += mapping.rss } }
        for line in smaps.split(separator: "\n") {
            let first = line.prefix { $0 != " " }
            if !first.hasSuffix(":") {
                close()
                let fields = line.split(separator: " ", omittingEmptySubsequences: true)
                let permissions = fields.count > 1 ? fields[1] : ""
                mapping = (0, 0, fields.count >= 6 && fields[5].hasPrefix("/") && !permissions.contains("w") && permissions.hasSuffix("p"))
            } else if let kB = line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first.flatMap({ Int($0) }) {
                if first == "Rss:" { mapping?.rss += kB }
                if first == "Anonymous:" { mapping?.anonymous += kB }
            }
        }
        close()
        return total
    }

    /// The pid of the worker of process `name`, from `status --json`.
    static func workerPid(_ run: AgentRun, _ name: String) throws -> Int32? {
        let result = try runProgram("agent-control", ["status", "--json", "--settings", run.settingsFile])
        let object = try? JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
        let process = (object?["processes"] as? [[String: Any]] ?? []).first { $0["name"] as? String == name }
        return (process?["pid"] as? Int).map(Int32.init)
    }

    /// Waits until the worker `pid` has given back its start's code pages (its "agent-pages"
    /// thread has come and gone after the ready frame), at most a minute.
    static func codeResidentKBOnceReleased(ofWorker pid: Int32, below ceiling: Int) throws -> Int {
        let deadline = Date().addingTimeInterval(60)
        var resident = try codeResidentKB(of: pid)
        while resident >= ceiling, Date() < deadline {
            Thread.sleep(forTimeInterval: 0.05)
            resident = try codeResidentKB(of: pid)
        }
        return resident
    }

    /// Waits until both processes run (their start settled), as `status` says.
    static func waitUntilRunning(_ run: AgentRun) throws -> Bool {
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline {
            let result = try runProgram("agent-control", ["status", "--json", "--settings", run.settingsFile])
            let object = try? JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
            let states = (object?["processes"] as? [[String: Any]] ?? []).compactMap { $0["state"] as? String }
            if states == ["running", "running"] { return true }
            Thread.sleep(forTimeInterval: 0.05)
        }
        return false
    }

    @Test func codePagesOnlyTheStartTouchedAreGivenBackAndTheAgentRunsOn() throws {
        // Kept: what the start leaves mapped.
        let kept = try AgentRun(settings: Self.settings, arguments: ["--no-build", "--json"], environment: ["AGENT_RELEASE_START_PAGES": "0"])
        defer { _ = kept.stop(signal: SIGKILL, timeout: 10) }
        #expect(try Self.waitUntilRunning(kept), "\(kept.transcript)")
        let keptKB = try Self.codeResidentKB(of: kept.process.processIdentifier)
        // A worker keeps its start's pages too.
        let keptWorker = try #require(try Self.workerPid(kept, "busy"))
        let keptWorkerKB = try Self.codeResidentKB(of: keptWorker)
        #expect(kept.stop() == 0)

        let run = try AgentRun(settings: Self.settings, arguments: ["--no-build", "--json", "--log-level", "debug"])
        defer { _ = run.stop(signal: SIGKILL, timeout: 10) }
        let line = run.waitForLine(onStderr: true) { $0.contains("the start's code pages given back") }
        #expect(line?.contains("MB of code unmapped)") == true && line?.contains("not all given back") == false, "\(run.transcript)")
        let releasedKB = try Self.codeResidentKB(of: run.process.processIdentifier)
        // What the agent touched again since is mapped again; the start's bulk is gone.
        #expect(releasedKB * 2 < keptKB, "code RSS \(releasedKB) kB after the release, \(keptKB) kB kept")
        // A worker gives its own back a second after its ready frame, and runs on. A monitor at
        // work maps much of its code again (a debug build's: two thirds).
        let worker = try #require(try Self.workerPid(run, "busy"))
        let workerKB = try Self.codeResidentKBOnceReleased(ofWorker: worker, below: keptWorkerKB * 3 / 4)
        #expect(workerKB * 4 < keptWorkerKB * 3, "worker code RSS \(workerKB) kB after the release, \(keptWorkerKB) kB kept")
        // Everything it runs is mapped again at its touch: commands, events, a reload, the stop.
        #expect(try Self.waitUntilRunning(run), "\(run.transcript)")
        func isTrade(_ line: String) -> Bool {
            ((try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any])?["type"] as? String == "trade"
        }
        let seen = run.stdoutLines.filter(isTrade).count
        #expect(run.waitForLines(count: seen + 3, isTrade).count >= seen + 3, "\(run.transcript)")
        // Once the steady state after the release is taken (30 s after it), commands and a
        // reload map code again: given back at the next look, 30 s later.
        #expect(run.waitForLine(onStderr: true, timeout: 90) { $0.contains("(the steady state)") } != nil, "\(run.transcript)")
        for _ in 0..<3 { #expect(try runProgram("agent-control", ["status", "--settings", run.settingsFile]).status == 0) }
        let reload = try runProgram("agent-control", ["reload", "--settings", run.settingsFile])
        #expect(reload.status == 0, "\(reload.stderr)")
        let again = run.waitForLine(onStderr: true, timeout: 90) { $0.contains("code pages mapped again") }
        #expect(again?.contains("MB of code unmapped)") == true, "\(run.transcript)")
        #expect(run.stop() == 0, "\(run.transcript)")
    }
}
