import AgentTestSupport
@testable import AgentWork
import Foundation
import JSONSchema
import Testing
@testable import AgentRuntime

/// `"schedules"` in the settings: read into definitions, and every problem reported at once
/// with its JSON pointer, by `validate-settings` as a user runs it.
@Suite(.ownThreads) struct ScheduleSettingsTests {
    @Test func aScheduleIsReadWithItsPolicies() throws {
        let settings = AgentSettings(json: try JSONValue.parse(#"""
            {"enabled_modules": [], "processes": {},
             "tasks": {"backup": {"type": "command", "command": ["/bin/true"]}},
             "schedules": {"nightly": {"cron": "0 3 * * *", "timezone": "Europe/Berlin", "run": {"task": "backup", "input": {"full": true}},
                                       "catch_up": "all", "max_catch_up": 3, "catch_up_window": 86400, "overlap": "queue", "jitter": 30,
                                       "enabled": false, "description": "every night"},
                           "tick": {"every": 5, "run": {"task": "backup"}},
                           "once": {"at": "2030-01-02T03:04:05Z", "run": {"task": "backup"}}}}
            """#), file: "settings.json")
        #expect(settings.hostIssues.isEmpty, "\(settings.hostIssues)")
        let nightly = try #require(settings.schedules.first { $0.name == "nightly" })
        #expect(nightly.timing == .cron(try CronExpression(parsing: "0 3 * * *")))
        #expect(nightly.timeZone.identifier == "Europe/Berlin")
        #expect(nightly.input == ["full": true])
        #expect(nightly.catchUp == .all && nightly.maxCatchUp == 3 && nightly.catchUpWindow == 86400)
        #expect(nightly.overlap == .queue && nightly.jitter == 30 && !nightly.enabled)
        let tick = try #require(settings.schedules.first { $0.name == "tick" })
        #expect(tick.timing == .every(5) && tick.catchUp == .one && tick.overlap == .skip && tick.enabled)
        #expect(settings.schedules.first { $0.name == "once" }?.timing == .at(1_893_553_445))
    }

    /// A literal input is a run's input at every fire: bounded as a requested one is.
    @Test func aLiteralInputOverOneMiBIsASettingsErrorAtItsPointer() throws {
        let items = Array(repeating: "\"" + String(repeating: "x", count: 1000) + "\"", count: 1100).joined(separator: ",")
        let settings = AgentSettings(json: try JSONValue.parse("""
            {"enabled_modules": [], "processes": {}, "tasks": {"t": {"type": "command", "command": ["/bin/true"]}},
             "schedules": {"big": {"every": 60, "run": {"task": "t", "input": {"items": [\(items)]}}},
                           "small": {"every": 60, "run": {"task": "t", "input": {"items": ["x"]}}}}}
            """), file: "settings.json")
        var validator = SettingsValidator()
        let issues = validator.check(settings, modules: [], manifests: [:]).generalIssues
        let problem = issues.first { $0.pointer == "/schedules/big/run/input" }
        #expect(problem?.message.contains("more than 1048576 bytes of JSON") == true, "\(issues.map(\.pointer))")
        #expect(!issues.contains { $0.pointer.hasPrefix("/schedules/small") }, "\(issues.map(\.pointer))")
    }

    @Test func everyProblemIsReportedWithItsPointerByValidateSettings() throws {
        let directory = TestPaths.temporaryDirectory("schedule-settings")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let file = directory + "/settings.json"
        try #"""
            {"enabled_modules": [], "processes": {},
             "tasks": {"backup": {"type": "command", "command": ["/bin/true"],
                                  "input": {"type": "object", "properties": {"full": {"type": "boolean"}}, "additionalProperties": false}},
                       "broken": {"type": "no-such-type"}},
             "schedules": {"minute": {"cron": "61 * * * *", "run": {"task": "backup"}},
                           "both": {"cron": "0 * * * *", "every": 60, "run": {"task": "backup"}},
                           "neither": {"run": {"task": "backup"}},
                           "zone": {"every": 60, "timezone": "Europe/Berln", "run": {"task": "backup"}},
                           "unknown": {"every": 60, "run": {"task": "bakup"}},
                           "invalidTask": {"every": 60, "run": {"task": "broken"}},
                           "input": {"every": 60, "run": {"task": "backup", "input": {"full": "yes"}}},
                           "fast": {"every": 0.01, "run": {"task": "backup"}},
                           "when": {"at": "tomorrow", "run": {"task": "backup"}},
                           "offset": {"every": 60, "timezone": "GMT+5", "run": {"task": "backup"}},
                           "nodate": {"at": "2027-02-30T00:00:00Z", "run": {"task": "backup"}},
                           "policy": {"every": 60, "catch_up": "some", "overlap": "wait", "max_catch_up": 0, "jitter": -1, "run": {"task": "backup"}},
                           "good": {"every": 60, "run": {"task": "backup", "input": {"full": true}}}}}
            """#.write(toFile: file, atomically: true, encoding: .utf8)
        let result = try runProgram("validate-settings", ["--settings", file, "--no-build", "--json"])
        #expect(result.status == 2, "\(result.stdout)\(result.stderr)")
        let report = try JSONValue.parse(Data(result.stdout.utf8))
        var found: [String: String] = [:]
        for error in report["errors"]?.arrayValue ?? [] {
            let pointer = error["pointer"]?.stringValue ?? "?"
            found[pointer, default: ""] += (error["message"]?.stringValue ?? "") + (error["follows_from"] != nil ? " [follows]" : "")
        }
        #expect(found["/schedules/minute/cron"]?.contains("minute \"61\"") == true, "\(found)")
        #expect(found["/schedules/both"]?.contains("one of \"cron\", \"every\" and \"at\"") == true, "\(found)")
        #expect(found["/schedules/neither"]?.contains("needs one of \"cron\"") == true, "\(found)")
        #expect(found["/schedules/zone/timezone"]?.contains("did you mean \"Europe/Berlin\"") == true, "\(found)")
        #expect(found["/schedules/unknown/run/task"]?.contains("unknown task \"bakup\"; did you mean \"backup\"") == true, "\(found)")
        // A schedule of an invalid task: the task's error is the one reported (a consequence is not counted twice).
        #expect(found["/tasks/broken/type"] != nil && found["/schedules/invalidTask/run/task"] == nil, "\(found)")
        #expect(found["/schedules/input/run/input/full"]?.contains("input schema of task \"backup\"") == true, "\(found)")
        #expect(found["/schedules/fast/every"] != nil, "\(found)")
        #expect(found["/schedules/when/at"]?.contains("ISO 8601") == true, "\(found)")
        #expect(found["/schedules/offset/timezone"]?.contains("\"Etc/GMT-5\" is +05:00") == true, "\(found)")
        #expect(found["/schedules/nodate/at"]?.contains("2027-02 has 28 days") == true, "\(found)")
        #expect(found["/schedules/policy/catch_up"] != nil && found["/schedules/policy/overlap"] != nil, "\(found)")
        #expect(found["/schedules/policy/max_catch_up"] != nil && found["/schedules/policy/jitter"] != nil, "\(found)")
        #expect(found.keys.filter { $0.hasPrefix("/schedules/good") }.isEmpty, "\(found)")
    }
}
