import AgentTestSupport
import Foundation
import JSONSchema
import Testing

/// Schedules through the real agent: fires from its loop's timer, runs of real commands, the
/// history and state in the agent's SQLite store, the CLI and HTTP fronts.
@Suite(.ownThreads) struct ScheduleEndToEndTests {
    /// A command task that appends its run id (and its input, on stdin) to `runs.txt`.
    static let logTask = #""log": {"type": "command", "command": "echo \"$AGENT_TASK_RUN_ID $(cat)\" >> runs.txt", "shell": true}"#

    @Test func aScheduleFiresItsTaskEverySecondAndKeepsAHistory() throws {
        let directory = TestPaths.temporaryDirectory("schedule-every")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let agent = try ScheduleAgent.start(ScheduleAgent.settings(tasks: Self.logTask, schedules: #"""
            "tick": {"every": 1, "run": {"task": "log", "input": {"from": "tick"}}},
            "hourly": {"every": 3600, "run": {"task": "log"}}
            """#), directory: directory)
        defer { _ = agent.run.stop() }
        let runs = directory + "/runs.txt"
        #expect(ScheduleAgent.wait { ScheduleAgent.lines(runs).count >= 3 }, "\(agent.run.transcript)")

        let history = try agent.history("tick")
        let fired = history.filter { $0["outcome"] == "fired" }
        #expect(fired.count >= 3, "\(history)")
        let ran = Set(ScheduleAgent.lines(runs).map { String($0.split(separator: " ")[0]) })
        for line in fired.dropFirst() {
            // Each fire: its planned time (a whole second, as `every: 1` says), when it was
            // requested, the run, and the run's result.
            let planned = try #require(line["planned"]?.stringValue)
            #expect(!planned.contains("."), "\(planned)")
            #expect((line["lateness"]?.numberValue?.doubleValue ?? -1) >= 0)
            let id = try #require(line["run_id"]?.stringValue)
            #expect(line["result"] == "succeeded" || line["result"] == "running", "\(line)")
            // A run still going may not have written its line yet (a loaded machine).
            if line["result"] == "succeeded" { #expect(ran.contains(id), "\(id) not in \(ran)") }
        }
        #expect(fired.dropFirst().contains { $0["result"] == "succeeded" }, "\(history)")
        #expect(ScheduleAgent.lines(runs).allSatisfy { $0.hasSuffix(#"{"from":"tick"}"#) })

        let list = try agent.list()
        let tick = try #require(list["tick"])
        #expect(tick["every"] == 1 && tick["task"] == "log" && tick["paused"] == false)
        #expect(tick["next_fire"]?.stringValue != nil && tick["last_fire"]?.stringValue != nil, "\(tick)")
        #expect(list["hourly"]?["last_fire"] == nil)
        let next = try #require(list["hourly"]?["next_fire"]?.stringValue)
        #expect(next.hasSuffix(":00:00Z") || next.contains(":00:00+") || next.contains(":00:00-") || next.contains(":30:00"), "\(next)")

        // The same over HTTP, and in the metrics.
        let answer = try agent.http("GET", "/api/schedules")
        #expect(answer.status == 200, "\(answer.body)")
        #expect(answer.body.contains("\"name\":\"tick\""))
        let metrics = try agent.http("GET", "/metrics")
        #expect(metrics.body.contains(#"agent_schedule_fires_total{schedule="tick"}"#), "\(metrics.body)")
        #expect(metrics.body.contains(#"agent_schedule_missed_total{schedule="hourly"} 0"#), "\(metrics.body)")
        // And as events from source "schedules".
        #expect(agent.run.stdoutLines.contains { $0.contains("\"source\":\"schedules\"") && $0.contains("schedule.fired") })
    }

    @Test func pauseIsKeptAcrossARestartAndResumeRecordsThePausedTimesAsSkipped() throws {
        let directory = TestPaths.temporaryDirectory("schedule-pause")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let settings = ScheduleAgent.settings(tasks: Self.logTask, schedules: #""tick": {"every": 1, "run": {"task": "log"}}"#)
        let first = try ScheduleAgent.start(settings, directory: directory)
        let paused = try first.control(["pause", "tick"])
        #expect(paused.status == 0, "\(paused.stderr)")
        #expect(first.run.stop() == 0)

        let second = try ScheduleAgent.start(nil, directory: directory)
        defer { _ = second.run.stop() }
        #expect(try second.list()["tick"]?["paused"] == true)
        Thread.sleep(forTimeInterval: 2.5)
        // (The first agent may have fired before the pause reached it: count this life's fires.)
        #expect(try second.list()["tick"]?["fired"] == 0, "a paused schedule fired")
        let resumed = try second.control(["resume", "tick"])
        #expect(resumed.status == 0, "\(resumed.stderr)")
        let skipped = try #require(try second.history("tick").first { $0["outcome"] == "skipped" })
        #expect(skipped["reason"] == "the schedule was paused")
        #expect((skipped["count"]?.numberValue?.intValue ?? 0) >= 2, "\(skipped)")
        #expect(try ScheduleAgent.wait { try second.list()["tick"]?["fired"]?.numberValue?.intValue ?? 0 >= 1 })
        #expect(try second.control(["pause", "nope"]).status == 1)
    }

    @Test func missedTimesAreCaughtUpAsEachSchedulesPolicySays() throws {
        let directory = TestPaths.temporaryDirectory("schedule-catch-up")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let settings = ScheduleAgent.settings(tasks: Self.logTask, schedules: #"""
            "none": {"every": 1, "catch_up": "none", "run": {"task": "log", "input": {"s": "none"}}},
            "one": {"every": 1, "run": {"task": "log", "input": {"s": "one"}}},
            "all": {"every": 1, "catch_up": "all", "max_catch_up": 2, "run": {"task": "log", "input": {"s": "all"}}},
            "boot": {"cron": "@reboot", "run": {"task": "log", "input": {"s": "boot"}}}
            """#)
        let first = try ScheduleAgent.start(settings, directory: directory)
        #expect(ScheduleAgent.wait { ["none", "one", "all"].allSatisfy { name in ScheduleAgent.lines(directory + "/runs.txt").contains { $0.contains("\"\(name)\"") } } })
        #expect(first.run.stop() == 0)
        // Down for a few fire times.
        Thread.sleep(forTimeInterval: 3.5)
        let second = try ScheduleAgent.start(nil, directory: directory)
        defer { _ = second.run.stop() }

        // What the start caught up, not what a loaded machine's first life did late (a loop
        // turn later than a fire time records "the agent was late" lines of its own).
        func atStart(_ entry: JSONValue, _ text: String) -> Bool {
            entry["reason"]?.stringValue?.contains("the agent was not running") == true && entry["reason"]?.stringValue?.contains(text) == true
        }
        let none = try second.history("none")
        let missed = try #require(none.first { $0["outcome"] == "missed" && atStart($0, "catch_up none") }, "\(none)")
        #expect((missed["count"]?.numberValue?.intValue ?? 0) >= 3, "\(missed)")

        let one = try second.history("one")
        if let folded = one.first(where: { atStart($0, "folded into one run") }) {
            #expect(folded["outcome"] == "fired" && (folded["count"]?.numberValue?.intValue ?? 0) >= 3, "\(folded)")
            #expect(folded["first_planned"] != nil && folded["run_id"] != nil)
        } else {
            // A loaded machine's first life can stop in the middle of its last run: interrupted,
            // that run goes on at this start, and the folded fire meets the overlap rule — one
            // line still, with every missed time counted.
            #expect(one.contains { $0["outcome"] == "skipped" && $0["reason"]?.stringValue?.contains("overlap skip") == true
                && ($0["count"]?.numberValue?.intValue ?? 0) >= 3 && $0["first_planned"] != nil }, "\(one)")
        }

        let all = try second.history("all")
        let caughtUp = all.filter { atStart($0, "caught up (catch_up all)") }
        #expect(caughtUp.count == 2, "\(all)")
        #expect(all.contains { $0["outcome"] == "missed" && atStart($0, "beyond max_catch_up (2)") }, "\(all)")
        // Every planned time once: the caught-up runs are the newest missed times, the rest missed.
        let planned = all.compactMap { $0["outcome"] == "fired" ? $0["planned"]?.stringValue : nil }
        #expect(Set(planned).count == planned.count, "\(planned)")

        // @reboot: once per start of the agent, never on the calendar.
        let boots = try second.history("boot")
        #expect(boots.count == 2 && boots.allSatisfy { $0["outcome"] == "fired" && $0["reason"] == "the agent started" }, "\(boots)")
        #expect(try second.list()["boot"]?["next_fire"] == nil)
    }

    @Test func aFireWhileThePreviousRunGoesIsSkippedOrWaitsAsItsOverlapSays() throws {
        let directory = TestPaths.temporaryDirectory("schedule-overlap")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let agent = try ScheduleAgent.start(ScheduleAgent.settings(tasks: #"""
            "slowSkip": {"type": "command", "command": ["/bin/sleep", "2.5"]},
            "slowQueue": {"type": "command", "command": ["/bin/sleep", "2.5"]},
            "slowReplace": {"type": "command", "command": ["/bin/sleep", "2.5"]}
            """#, schedules: #"""
            "skip": {"every": 1, "run": {"task": "slowSkip"}},
            "queue": {"every": 1, "overlap": "queue", "run": {"task": "slowQueue"}},
            "replace": {"every": 1, "overlap": "replace", "run": {"task": "slowReplace"}}
            """#), directory: directory)
        defer { _ = agent.run.stop() }
        #expect(try ScheduleAgent.wait { try agent.history("queue").contains { $0["reason"]?.stringValue?.contains("waited for the previous run") == true } })
        let skip = try agent.history("skip")
        #expect(skip.contains { $0["outcome"] == "skipped" && $0["reason"]?.stringValue?.contains("still going (overlap skip)") == true }, "\(skip)")
        let queue = try agent.history("queue")
        #expect(queue.contains { $0["outcome"] == "waiting" }, "\(queue)")
        #expect(queue.contains { $0["outcome"] == "skipped" && $0["reason"]?.stringValue?.contains("already waits") == true }, "\(queue)")
        // One run at a time for each: never two of a schedule's runs at once.
        let running = try runProgram("agent-control", ["task", "runs", "--status", "running", "--json", "--settings", agent.run.settingsFile])
        let tasks = running.stdout.split(separator: "\n").compactMap { try? JSONValue.parse(Data($0.utf8))["task"]?.stringValue }
        #expect(tasks.filter { $0 == "slowSkip" }.count <= 1 && tasks.filter { $0 == "slowQueue" }.count <= 1, "\(tasks)")
        // A run the next fire replaced says so, not "at a user's request".
        var replaced: [String] = []
        #expect(try ScheduleAgent.wait {
            let cancelled = try runProgram("agent-control", ["task", "runs", "--task", "slowReplace", "--status", "cancelled", "--json", "--settings", agent.run.settingsFile])
            replaced = cancelled.stdout.split(separator: "\n").compactMap { try? JSONValue.parse(Data($0.utf8))["error"]?.stringValue }
            return !replaced.isEmpty
        }, "no run of slowReplace was cancelled")
        #expect(replaced.allSatisfy { $0.contains("schedule replace fired again and replaces it (overlap replace)") }, "\(replaced)")
    }

    @Test func runNowStartsARunAndLeavesTheTimingAlone() throws {
        let directory = TestPaths.temporaryDirectory("schedule-run-now")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let agent = try ScheduleAgent.start(ScheduleAgent.settings(tasks: Self.logTask, schedules: #""daily": {"every": 86400, "run": {"task": "log"}}"#),
                                            directory: directory)
        defer { _ = agent.run.stop() }
        let before = try #require(try agent.list()["daily"]?["next_fire"]?.stringValue)
        let result = try agent.control(["run", "daily"])
        #expect(result.status == 0, "\(result.stderr)")
        let id = result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(ScheduleAgent.wait { ScheduleAgent.lines(directory + "/runs.txt").contains { $0.hasPrefix(id + " ") } })
        let line = try #require(try agent.history("daily").first)
        #expect(line["outcome"] == "fired" && line["run_id"]?.stringValue == id && line["planned"] == nil && line["reason"] == "run now", "\(line)")
        #expect(try agent.list()["daily"]?["next_fire"]?.stringValue == before)
        // `schedule next NAME`: the schedule's coming times from the agent, one a line.
        let next = try agent.control(["next", "daily", "-n", "3"])
        #expect(next.status == 0, "\(next.stderr)")
        let times = next.stdout.split(separator: "\n").compactMap { ScheduleCrashTests.seconds(String($0)) }
        #expect(times.count == 3 && times[1] - times[0] == 86400 && times[2] - times[1] == 86400, "\(next.stdout)")
        #expect(next.stdout.hasPrefix(before), "\(next.stdout) vs \(before)")
        let missing = try agent.control(["run", "dialy"])
        #expect(missing.status == 1 && missing.stderr.contains("did you mean \"daily\""), "\(missing.stderr)")
    }

    /// A fire waiting for the previous run (overlap queue) goes with its schedule, and the
    /// history says so: its `waiting` line stayed the last word, and the first of a schedule
    /// of that name added later.
    @Test func aFireWaitingWhenItsScheduleIsRemovedIsRecordedAsSkipped() throws {
        let directory = TestPaths.temporaryDirectory("schedule-removed-waiting")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let agent = try Self.agentWithAWaitingFire(in: directory)
        defer { _ = agent.run.stop() }
        let body = JSONValue.object(["action": "replace", "text": .string(ScheduleAgent.settings(tasks: Self.slowTask, schedules: ""))]).serialized()
        #expect(try agent.http("POST", "/api/settings/changes", body: body).status == 200)
        let history = try agent.history("q")
        #expect(history.first?["outcome"] == "skipped", "\(history)")
        #expect(history.first?["reason"]?.stringValue?.contains("removed while this fire waited") == true, "\(history)")
    }

    static let slowTask = #""slow": {"type": "command", "command": ["/bin/sleep", "30"]}"#

    /// An agent whose schedule `q` (every second, overlap queue) has a fire waiting for its run.
    static func agentWithAWaitingFire(in directory: String) throws -> ScheduleAgent {
        let agent = try ScheduleAgent.start(ScheduleAgent.settings(tasks: slowTask, schedules: #""q": {"every": 1, "overlap": "queue", "run": {"task": "slow"}}"#),
                                            directory: directory)
        #expect(try ScheduleAgent.wait { try agent.history("q").contains { $0["outcome"] == "waiting" } }, "no fire of q waited")
        return agent
    }

    /// The same when the schedule is removed while the agent is down (killed with a fire waiting).
    @Test func aFireWaitingWhenItsScheduleIsRemovedWhileTheAgentIsDownIsRecordedAsSkipped() throws {
        let directory = TestPaths.temporaryDirectory("schedule-removed-down")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let first = try Self.agentWithAWaitingFire(in: directory)
        _ = first.run.stop(signal: SIGKILL)
        let second = try ScheduleAgent.start(ScheduleAgent.settings(tasks: Self.slowTask, schedules: ""), directory: directory)
        defer { _ = second.run.stop() }
        let history = try second.history("q")
        #expect(history.first?["outcome"] == "skipped" && history.first?["reason"]?.stringValue?.contains("removed while this fire waited") == true, "\(history)")
    }

    @Test func aScheduleAddedOrRemovedOverHTTPIsValidatedWrittenAndReloaded() throws {
        let directory = TestPaths.temporaryDirectory("schedule-http-change")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let agent = try ScheduleAgent.start(ScheduleAgent.settings(tasks: Self.logTask, schedules: ""), directory: directory)
        defer { _ = agent.run.stop() }
        func replace(_ schedules: String) throws -> HTTPProbe.Answer {
            let text = ScheduleAgent.settings(tasks: Self.logTask, schedules: schedules)
            let body = JSONValue.object(["action": "replace", "text": .string(text)]).serialized()
            return try agent.http("POST", "/api/settings/changes", body: body)
        }
        let refused = try replace(#""bad": {"cron": "0 25 * * *", "run": {"task": "log"}}"#)
        #expect(refused.status == 422 || refused.status == 400, "\(refused.status) \(refused.body)")
        #expect(refused.body.contains("/schedules/bad/cron") && refused.body.contains("hour"), "\(refused.body)")
        #expect(try agent.list().isEmpty)

        let added = try replace(#""tick": {"every": 1, "run": {"task": "log"}}"#)
        #expect(added.status == 200, "\(added.body)")
        #expect(try agent.list()["tick"] != nil)
        #expect(ScheduleAgent.wait { !ScheduleAgent.lines(directory + "/runs.txt").isEmpty })

        let removed = try replace("")
        #expect(removed.status == 200, "\(removed.body)")
        #expect(try agent.list().isEmpty)
        // A removed schedule's history stays, running or stopped (it was "no schedule named").
        #expect(try agent.history("tick").contains { $0["outcome"] == "fired" && $0["planned"]?.stringValue?.hasSuffix("Z") == true })
        let never = try agent.control(["history", "tock"])
        #expect(never.status != 0 && never.stderr.contains("no schedule named \"tock\""), "\(never.stdout)\(never.stderr)")
        #expect(agent.run.stop() == 0)
        #expect(try agent.history("tick").contains { $0["outcome"] == "fired" }, "read from the store of the stopped agent")
    }
}
