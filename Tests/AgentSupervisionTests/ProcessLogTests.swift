@testable import AgentBase
@testable import AgentSupervision
import AgentTestSupport
import Foundation
import Testing

/// The per-process log kept by the supervisor (`agent-control logs`, the `logs` control
/// command): real agents, real workers writing to their stdout and stderr.
@Suite(.ownThreads) struct ProcessLogTests {
    private func agent(_ processes: String) throws -> AgentRun {
        try AgentRun(settings: #"{"enabled_modules": ["faults"], "store": {"enabled": false}, "processes": {\#(processes)}}"#,
                     arguments: ["--no-build", "--json", "--quiet"])
    }

    private static func socket(of agent: AgentRun) -> String { agent.directory + "/.agent/run/control.sock" }

    /// `agent-control logs ARGS --settings …` against the agent.
    private func logs(_ agent: AgentRun, _ arguments: [String]) throws -> ProgramResult {
        try runProgram("agent-control", ["logs"] + arguments + ["--settings", agent.settingsFile])
    }

    /// The lines `agent-control logs NAME --json` prints, decoded.
    private func jsonLines(_ agent: AgentRun, _ name: String, _ extra: [String] = []) throws -> [[String: Any]] {
        let result = try logs(agent, [name, "--json"] + extra)
        #expect(result.status == 0, "\(result.stderr)")
        return result.stdout.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
    }

    private static func texts(_ lines: [[String: Any]], stream: String) -> [String] {
        lines.filter { $0["stream"] as? String == stream }.compactMap { $0["text"] as? String }
    }

    @Test func linesAWorkerWritesOnStdoutAndStderrAreKeptWithTheirStream() throws {
        let run = try agent(#""talker": {"type": "fault", "print_lines": 3, "tick_ms": 1000}"#)
        defer { _ = run.stop() }
        // The console shows them as before: prefixed with the process, tagged as output.
        #expect(run.waitForLine(onStderr: true) { $0.contains("[talker] stderr line 3 stream=output") } != nil, "\(run.transcript)")
        #expect(run.waitForLine(onStderr: true) { $0.contains("[talker] stdout line 3 stream=output") } != nil, "\(run.transcript)")

        let lines = try jsonLines(run, "talker")
        #expect(Self.texts(lines, stream: "stdout") == ["stdout line 1", "stdout line 2", "stdout line 3"], "\(lines)")
        #expect(Self.texts(lines, stream: "stderr") == ["stderr line 1", "stderr line 2", "stderr line 3"], "\(lines)")
        // The supervisor's own lines about it, with their level.
        #expect(Self.texts(lines, stream: "supervisor").contains { $0.hasPrefix("info: started worker pid ") }, "\(lines)")
        // Sequence numbers grow; times are ISO 8601 in UTC.
        let seqs = lines.compactMap { $0["seq"] as? Int }
        #expect(seqs.count == lines.count && seqs == seqs.sorted() && Set(seqs).count == seqs.count)
        #expect(lines.allSatisfy { ($0["time"] as? String)?.range(of: #"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$"#, options: .regularExpression) != nil })

        // The text form: TIME STREAM TEXT.
        let text = try logs(run, ["talker"])
        #expect(text.status == 0)
        #expect(text.stdout.split(separator: "\n").contains { $0.range(of: #"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z stderr stderr line 2$"#, options: .regularExpression) != nil },
                "\(text.stdout)")
    }

    @Test func theLogKeepsTheLinesOfWorkersThatDiedAndTheSupervisorsLinesAboutTheirRestarts() throws {
        let run = try agent(#""crashy": {"type": "fault", "mode": "exit", "after_ms": 50, "print_lines": 1, "restart": {"initial_delay": 0.05, "max_restarts": null}}"#)
        defer { _ = run.stop() }
        // At least two: under load more restarts can come before the lines are read.
        #expect(run.waitForLines(onStderr: true, count: 2) { $0.contains("[crashy]") && $0.contains("restarting in") }.count >= 2, "\(run.transcript)")
        let lines = try jsonLines(run, "crashy")
        let supervisor = Self.texts(lines, stream: "supervisor")
        #expect(supervisor.contains { $0.hasPrefix("warning: worker pid ") && $0.contains("exited with status 1") && $0.contains("restarting in") }, "\(lines)")
        // What the module logged through its context is among the agent's lines about it.
        #expect(supervisor.contains { $0.contains("exiting after tick") }, "\(lines)")
        // Each worker printed its line: the dead ones' stay, the successors' follow.
        #expect(Self.texts(lines, stream: "stdout").filter { $0 == "stdout line 1" }.count >= 2, "\(lines)")
        #expect(supervisor.filter { $0.hasPrefix("info: started worker pid ") }.count >= 2, "\(lines)")
    }

    @Test func aFloodKeepsOnlyTheLastLinesAndALongLineIsCutSayingSo() throws {
        let run = try agent(#"""
        "many": {"type": "fault", "print_lines": 10000, "tick_ms": 1000},
        "wide": {"type": "fault", "print_lines": 1000, "print_line_bytes": 1000, "tick_ms": 1000},
        "long": {"type": "fault", "print_lines": 1, "print_line_bytes": 20000, "tick_ms": 1000}
        """#)
        defer { _ = run.stop() }
        #expect(run.waitForLine(onStderr: true) { $0.contains("[many] stderr line 10000 stream=output") } != nil, "\(run.transcript)")
        #expect(run.waitForLine(onStderr: true) { $0.contains("[many] stdout line 10000 stream=output") } != nil)
        #expect(run.waitForLine(onStderr: true) { $0.contains("[wide] stderr line 1000x") } != nil)
        #expect(run.waitForLine(onStderr: true) { $0.contains("[wide] stdout line 1000x") } != nil)
        #expect(run.waitForLine(onStderr: true) { $0.contains("[long] stderr line 1x") } != nil)

        // 20,000 lines written (more than the pipes hold): the last 2,000 read are kept, the
        // newest included. (The two pipes are read in turns: how the streams interleave in the
        // log depends on when each was read.)
        let many = try jsonLines(run, "many")
        #expect(many.count == 2000, "\(many.count) lines")
        let newest = many.last { $0["stream"] as? String != "supervisor" }?["text"] as? String
        #expect(["stdout line 10000", "stderr line 10000"].contains(newest), "\(many.suffix(3))")
        #expect(!Self.texts(many, stream: "stdout").contains("stdout line 1") && !Self.texts(many, stream: "stderr").contains("stderr line 1"))

        // 2,000 lines of 1,000 bytes: 512 KiB of text is kept, fewer than 2,000 lines.
        let wide = try jsonLines(run, "wide")
        let bytes = wide.compactMap { ($0["text"] as? String)?.utf8.count }.reduce(0, +)
        #expect(bytes <= 512 << 10 && bytes > 500 << 10, "\(bytes) bytes in \(wide.count) lines")
        #expect(wide.count < 600)
        #expect(Self.texts(wide, stream: "stdout").last?.hasPrefix("stdout line 1000x") == true)

        // A line of 20,000 bytes: 16 KiB of it, and a note of its length.
        let long = Self.texts(try jsonLines(run, "long"), stream: "stdout")
        #expect(long.count == 1)
        #expect(long.first?.hasPrefix("stdout line 1xxx") == true)
        #expect(long.first?.hasSuffix(" … [line cut: 20000 bytes, the first 16384 kept]") == true, "\(long.first?.suffix(80) ?? "")")
        #expect(long.first.map { $0.utf8.count < 16384 + 100 } == true)
    }

    @Test func linesSinceAndFollowWorkEndToEnd() throws {
        let run = try agent(#""ticker": {"type": "fault", "print_lines": 5, "tick_ms": 1000}"#)
        defer { _ = run.stop() }
        #expect(run.waitForLine(onStderr: true) { $0.contains("[ticker] stderr line 5 stream=output") } != nil, "\(run.transcript)")
        #expect(run.waitForLine(onStderr: true) { $0.contains("[ticker] stdout line 5 stream=output") } != nil)

        // -n: the newest lines.
        let two = try logs(run, ["ticker", "-n", "2"])
        #expect(two.status == 0, "\(two.stderr)")
        #expect(two.stdout.split(separator: "\n").count == 2, "\(two.stdout)")
        let all = try jsonLines(run, "ticker")
        #expect(all.count > 10)
        #expect(try jsonLines(run, "ticker", ["-n", "3"]).compactMap { $0["seq"] as? Int } == all.suffix(3).compactMap { $0["seq"] as? Int })

        // Follow: what the next worker writes appears, each line once.
        let follower = try LogFollower(run, name: "ticker")
        // Its first answer (-n 1: the newest line, then where the log is now) came: what
        // follows it is the next worker's.
        #expect(follower.wait { !$0.isEmpty }, "\(follower)")

        // A point in time between the first worker's lines and the next one's.
        let cut = ISO8601DateFormatter.string(from: Date(), timeZone: TimeZone(identifier: "UTC")!, formatOptions: [.withInternetDateTime, .withFractionalSeconds])
        Thread.sleep(forTimeInterval: 0.05)
        let restart = try runProgram("agent-control", ["process", "restart", "ticker", "--settings", run.settingsFile])
        #expect(restart.status == 0, "\(restart.stderr)")
        #expect(run.waitForLines(onStderr: true, count: 2) { $0.contains("[ticker] stdout line 5 stream=output") }.count == 2, "\(run.transcript)")
        // After the first line (-n 1: the newest, which may itself be the first worker's
        // "stdout line 5").
        #expect(follower.wait { Self.texts(Array($0.dropFirst()), stream: "stdout").contains("stdout line 5") }, "\(follower)")
        follower.stop()
        let newest = follower.lines.first?["seq"] as? Int ?? -1
        let next = Array(follower.lines.dropFirst())
        #expect(newest >= all.last?["seq"] as? Int ?? 0, "-n 1 printed the newest line first")
        let seqs = next.compactMap { $0["seq"] as? Int }
        #expect(seqs == seqs.sorted() && Set(seqs).count == seqs.count, "\(seqs)")
        // Nothing of before but the newest line, then the restart's lines as they came.
        #expect(seqs.allSatisfy { $0 > newest }, "\(seqs)")
        #expect(Self.texts(next, stream: "stdout") == (1...5).map { "stdout line \($0)" }, "\(next) \(follower)")
        #expect(Self.texts(next, stream: "supervisor").contains { $0.contains("restart requested over the control socket") }, "\(next)")

        // --since: only the lines from then on (the second worker's), as a duration too.
        let since = try jsonLines(run, "ticker", ["--since", cut])
        #expect(Self.texts(since, stream: "stdout") == (1...5).map { "stdout line \($0)" }, "\(since)")
        #expect(since.allSatisfy { ($0["time"] as? String ?? "") >= String(cut.prefix(23)) }, "\(cut) \(since)")
        #expect(try jsonLines(run, "ticker", ["--since", "1h"]).count == (try jsonLines(run, "ticker")).count)
        #expect(try jsonLines(run, "ticker", ["--since", "1h"]).count > since.count)
        #expect(try logs(run, ["ticker", "--since", "yesterday"]).status == 64)
    }

    /// A request of `logs -f` that fails for a moment (here refused at the agent's control
    /// connection limit, as on a loaded agent) is said on stderr and tried again: the follow
    /// goes on. It used to end at the first failed request, with its error on stderr.
    @Test func aFollowerRefusedForAMomentSaysSoAndGoesOnFollowing() throws {
        let run = try AgentRun(settings: #"{"enabled_modules": ["faults"], "store": {"enabled": false}, "processes": {"ticker": {"type": "fault", "print_lines": 3, "tick_ms": 1000}}}"#,
                               arguments: ["--no-build", "--json", "--quiet"],
                               environment: ["AGENT_CONTROL_MAX_CONNECTIONS": "2", "AGENT_CONTROL_IDLE_TIMEOUT": "600"])
        defer { _ = run.stop() }
        #expect(run.waitForLine(onStderr: true) { $0.contains("[ticker] stdout line 3 stream=output") } != nil, "\(run.transcript)")
        let follower = try LogFollower(run, name: "ticker")
        #expect(follower.wait { !$0.isEmpty }, "\(follower)")

        // The agent's two connections, held without a request until the follower is refused
        // (a connection that comes while the follower's is open is refused itself: again).
        // Two, so that the restart below always has a connection beside the follower's.
        var held: [RawControlClient] = []
        let deadline = Date().addingTimeInterval(60)
        while !follower.errors.contains("control connections open"), Date() < deadline, follower.isRunning {
            if held.count < 2, let client = RawControlClient(path: Self.socket(of: run)) { held.append(client) }
            // A refused one reads its refusal: let it go.
            held.removeAll { $0.readLine(timeout: 0.05) != nil }
        }
        #expect(follower.errors.contains("control connections open"), "\(follower)")
        #expect(follower.isRunning && follower.errors.contains("trying again"), "\(follower)")

        // Served again: the next worker's lines come.
        held = []
        // (Until the agent has seen them close, a request may still be refused at the limit.)
        let served = Date().addingTimeInterval(60)
        var restart = try runProgram("agent-control", ["process", "restart", "ticker", "--settings", run.settingsFile])
        while restart.stderr.contains("control connections open"), Date() < served {
            restart = try runProgram("agent-control", ["process", "restart", "ticker", "--settings", run.settingsFile])
        }
        #expect(restart.status == 0, "\(restart.stderr)")
        let restarted = { (lines: [[String: Any]]) in
            Self.texts(Array(lines.drop { !(($0["text"] as? String)?.contains("restart requested") ?? false) }), stream: "stdout")
        }
        #expect(follower.wait { restarted($0).contains("stdout line 3") }, "\(follower.lines) \(follower)")
        #expect(follower.isRunning, "\(follower)")
    }

    @Test func anUnknownProcessIsNotFoundWithTheClosestNameAndAStoppedAgentIsNotRunning() throws {
        let run = try agent(#""talker": {"type": "fault", "tick_ms": 1000}"#)
        #expect(run.waitForLine(onStderr: true) { $0.contains("[talker] ready in") } != nil, "\(run.transcript)")
        let unknown = try logs(run, ["talkr"])
        #expect(unknown.status == 1)
        #expect(unknown.stderr.contains(#"no process named "talkr"; did you mean "talker"?"#), "\(unknown.stderr)")

        let answer = RawControlClient.request(Self.socket(of: run), #"{"command": "logs", "name": "talkr"}"#)
        #expect(answer?["ok"] as? Bool == false)
        #expect(answer?["code"] as? String == "not_found", "\(answer ?? [:])")
        let invalid = RawControlClient.request(Self.socket(of: run), #"{"command": "logs", "name": "talker", "lines": -1}"#)
        #expect(invalid?["code"] as? String == "invalid")
        #expect(invalid?["pointer"] as? String == "/lines", "\(invalid ?? [:])")
        let paged = RawControlClient.request(Self.socket(of: run), #"{"command": "logs", "name": "talker", "lines": 1, "after": 0}"#)
        let first = (paged?["lines"] as? [[String: Any]])?.first
        #expect(first?["seq"] as? Int == paged?["next"] as? Int, "\(paged ?? [:])")

        #expect(run.stop() == 0)
        let notRunning = try logs(run, ["talker"])
        #expect(notRunning.status == 3, "\(notRunning.stderr)")
    }

    @Test func statusShowsEachWorkersCPUTimeAndResidentMemory() throws {
        let run = try agent(#""busy": {"type": "fault", "tick_ms": 0}, "off": {"type": "fault", "enabled": false}"#)
        defer { _ = run.stop() }
        #expect(run.waitForLine(onStderr: true) { $0.contains("[busy] ready in") } != nil, "\(run.transcript)")
        Thread.sleep(forTimeInterval: 0.3)
        let status = try runProgram("agent-control", ["status", "--json", "--settings", run.settingsFile])
        let object = try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any]
        let processes = object?["processes"] as? [[String: Any]] ?? []
        let busy = processes.first { $0["name"] as? String == "busy" }
        #expect((busy?["rss_bytes"] as? Int ?? 0) > 1 << 20, "\(busy ?? [:])")
        #expect((busy?["cpu_seconds"] as? Double ?? 0) > 0, "\(busy ?? [:])")
        let off = processes.first { $0["name"] as? String == "off" }
        #expect(off != nil && off?["rss_bytes"] == nil && off?["cpu_seconds"] == nil)

        let table = try runProgram("agent-control", ["status", "--settings", run.settingsFile])
        let lines = table.stdout.split(separator: "\n")
        #expect(lines.contains { $0.contains("CPU") && $0.contains("MEM") }, "\(table.stdout)")
        #expect(lines.contains { $0.hasPrefix("busy ") && $0.range(of: #"\d+\.\d\ds +\d+(\.\d)?M "#, options: .regularExpression) != nil }, "\(table.stdout)")
    }
}

/// The log's own bounds and paging, without an agent.
@Suite(.ownThreads) struct ProcessLogBufferTests {
    @Test func linesBeyondTheLineOrByteLimitDropTheOldest() {
        let log = ProcessLog(limits: .init(lines: 3, bytes: 1000, lineBytes: 100))
        log.keep(["a", "b"])
        for index in 1...5 { log.append("a", .stdout, "line \(index)") }
        log.append("b", .stderr, "other")
        #expect(log.read("a")?.lines.map(\.text) == ["line 3", "line 4", "line 5"])
        #expect(log.read("b")?.lines.map(\.seq) == [6])

        let small = ProcessLog(limits: .init(lines: 100, bytes: 250, lineBytes: 100))
        small.keep(["a"])
        for index in 1...5 { small.append("a", .stdout, String(repeating: "\(index)", count: 100)) }
        #expect(small.read("a")?.lines.map { $0.text.first } == ["4", "5"])
    }

    @Test func aLongLineIsCutAtACharacterBoundarySayingHowLongItWas() {
        let log = ProcessLog(limits: .init(lines: 10, bytes: 10000, lineBytes: 64))
        log.keep(["a"])
        log.append("a", .stdout, String(repeating: "é", count: 100))
        let text = log.read("a")?.lines.first?.text ?? ""
        #expect(text == String(repeating: "é", count: 32) + " … [line cut: 200 bytes, the first 64 kept]")
        log.append("a", .stdout, String(repeating: "x", count: 63) + "é")
        #expect(log.read("a", limit: 1)?.lines.first?.text.hasPrefix(String(repeating: "x", count: 63) + " … [line cut: 65 bytes") == true)
    }

    @Test func pagingAfterASequenceNumberNeverSkipsALine() {
        let log = ProcessLog()
        log.keep(["a", "b"])
        for index in 1...10 { log.append(index % 2 == 0 ? "a" : "b", .stdout, "\(index)") }
        var seen: [String] = []
        var after = 0
        while let page = log.read("a", after: after, limit: 2), !page.lines.isEmpty {
            seen += page.lines.map(\.text)
            after = page.next
        }
        #expect(seen == ["2", "4", "6", "8", "10"])
        #expect(after == 10)
        log.append("a", .stderr, "11")
        #expect(log.read("a", after: after)?.lines.map(\.text) == ["11"])
        // A removed process loses its log; the others keep theirs.
        log.keep(["a"])
        #expect(log.read("b") == nil)
        log.append("b", .stdout, "ignored")
        #expect(log.read("b") == nil && log.read("a")?.lines.count == 6)
    }

    @Test func manyEvictionsKeepTheNewestLinesInOrder() {
        let log = ProcessLog(limits: .init(lines: 10, bytes: 1 << 20, lineBytes: 100))
        log.keep(["a"])
        for index in 1...10_000 { log.append("a", .stdout, "\(index)") }
        #expect(log.read("a")?.lines.map(\.text) == (9991...10_000).map(String.init))
    }
}
