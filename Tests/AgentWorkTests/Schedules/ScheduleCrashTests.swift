import AgentTestSupport
import Foundation
import JSONSchema
import Testing

/// A fire's run request and the schedule's state are committed together, before the run
/// starts: SIGKILL of the agent at any moment around its fires loses no fire time and runs
/// none twice.
@Suite(.ownThreads) struct ScheduleCrashTests {
    @Test func twentyKillsOfTheAgentAroundItsFiresLoseNoFireAndDoubleNone() throws {
        let directory = TestPaths.temporaryDirectory("schedule-kill")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let settings = ScheduleAgent.settings(
            tasks: #""log": {"type": "command", "command": "echo \"$AGENT_TASK_RUN_ID $AGENT_TASK_ATTEMPT\" >> runs.txt", "shell": true}"#,
            schedules: #""tick": {"every": 1, "catch_up": "all", "max_catch_up": 100000, "overlap": "allow", "run": {"task": "log"}}"#)
        try settings.write(toFile: directory + "/settings.json", atomically: true, encoding: .utf8)
        // Kills land just before, at and just after whole seconds (the fire times), where a
        // fire is being committed or its run started.
        let offsets = [-0.02, -0.004, 0, 0.0005, 0.001, 0.002, 0.003, 0.005, 0.008, 0.012, 0.02, 0.05, 0.1, 0.3, -0.1]
        for kill in 0..<20 {
            let agent = try ScheduleAgent.start(nil, directory: directory)
            let now = Date().timeIntervalSince1970
            let target = now.rounded(.down) + 1 + Double(kill % 2) + offsets[kill % offsets.count]
            Thread.sleep(forTimeInterval: max(target - Date().timeIntervalSince1970, 0))
            #expect(agent.run.stop(signal: SIGKILL) != nil)
        }
        let agent = try ScheduleAgent.start(nil, directory: directory)
        defer { _ = agent.run.stop() }
        // A few fires after the last catch-up, then no more (paused), and every run requested has ended.
        #expect(try ScheduleAgent.wait { try agent.history("tick", limit: 3).allSatisfy { $0["reason"] == nil } })
        #expect(try agent.control(["pause", "tick"]).status == 0)
        #expect(try ScheduleAgent.wait(timeout: 60) {
            let running = try runProgram("agent-control", ["task", "runs", "--json", "--limit", "10000", "--settings", agent.run.settingsFile])
            let unfinished = running.stdout.split(separator: "\n").filter { line in
                ["queued", "running", "retrying"].contains(try? JSONValue.parse(Data(line.utf8))["status"]?.stringValue ?? "")
            }
            return try unfinished.isEmpty && agent.history("tick", limit: 3).first?["outcome"] == "fired"
        })
        let history = try agent.history("tick", limit: 10000)
        // (overlap allow: a run interrupted by a kill waits for its retry, and the fires meanwhile
        // must not be skipped for it.)
        #expect(!history.contains { $0["outcome"] != "fired" }, "\(history.filter { $0["outcome"] != "fired" })")
        let fires = history.filter { $0["outcome"] == "fired" }
        let planned = fires.compactMap { $0["planned"]?.stringValue }.compactMap(Self.seconds)
        #expect(planned.count == fires.count)
        // No fire doubled: each planned time once, each with a run of its own.
        #expect(Set(planned).count == planned.count, "planned twice: \(Dictionary(grouping: planned, by: { $0 }).filter { $0.value.count > 1 }.keys.sorted())")
        let ids = fires.compactMap { $0["run_id"]?.stringValue }
        #expect(Set(ids).count == fires.count)
        // No fire lost: every second from the first fire to the last is there.
        let sorted = planned.sorted()
        let first = try #require(sorted.first), last = try #require(sorted.last)
        let lost = Set(first...last).subtracting(sorted)
        #expect(lost.isEmpty, "fire times lost: \(lost.sorted())")
        #expect(last - first >= 20, "the agent ran \(last - first) s over 20 kills")
        // Every recorded run was carried out, and nothing ran without a recorded fire.
        let ran = Set(ScheduleAgent.lines(directory + "/runs.txt").map { String($0.split(separator: " ")[0]) })
        #expect(Set(ids).subtracting(ran).isEmpty, "recorded but never run: \(Set(ids).subtracting(ran))")
        #expect(ran.subtracting(ids).isEmpty, "run without a recorded fire: \(ran.subtracting(ids))\n\(agent.run.stderrLines.filter { $0.contains("schedules") }.joined(separator: "\n"))")
    }

    /// `2026-11-24T08:00:01Z` → its second since the epoch (whole seconds only).
    static func seconds(_ text: String) -> Int? {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        return formatter.date(from: text).map { Int($0.timeIntervalSince1970) }
    }
}
