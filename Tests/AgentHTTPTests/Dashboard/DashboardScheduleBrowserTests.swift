import AgentTestSupport
@testable import AgentWork
import Foundation
import JSONSchema
import Testing

/// The dashboard's schedules page in a real browser (Chromium over WebDriver) against a real
/// agent: the schedules with their next fire time, a schedule paused from its form, another
/// run now from its form, its run followed until it succeeded and found in its history.
@Suite(.ownThreads, .serialized) struct DashboardScheduleBrowserTests {
    /// Crons that cannot fire while the test runs: 12 hours from now in Tokyo, the weekly one
    /// three days on. A fixed `30 4 * * *` fired in the middle of a run at 19:30 UTC, and the
    /// history the test reads had two fires.
    static let crons: (daily: String, weekly: String, dailyTime: String) = {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "Asia/Tokyo")!
        let later = calendar.dateComponents([.hour, .minute, .weekday], from: Date().addingTimeInterval(12 * 3600))
        let (hour, minute) = (later.hour!, later.minute!)
        let day = (later.weekday! - 1 + 3) % 7  // cron's 0 is Sunday, Calendar's 1
        return ("\(minute) \(hour) * * *", "\(minute) \(hour) * * \(day)", String(format: "%02d:%02d:00+09:00", hour, minute))
    }()

    static let settings = #"""
    {
      "enabled_modules": [],
      "http": {"listen": "127.0.0.1:0", "users": {"alice": {"password_hash": "HASH"}}},
      "processes": {},
      "tasks": {
        "report": {"type": "command", "command": ["/bin/sh", "-c", "echo reported"], "description": "writes a report"}
      },
      "schedules": {
        "morning": {"cron": "\#(crons.daily)", "timezone": "Asia/Tokyo", "run": {"task": "report"}, "description": "every morning in Tokyo"},
        "weekly": {"cron": "\#(crons.weekly)", "timezone": "Asia/Tokyo", "run": {"task": "report"}}
      }
    }
    """#

    /// The fire times the page may show for `cron` in Tokyo (the next after a moment before the
    /// page was read, or after one after it: the instant may pass in between), as it shows them.
    static func nextFires(_ cron: String, between start: Date, and end: Date) throws -> Set<String> {
        let expression = try CronExpression(parsing: cron)
        let zone = TimeZone(identifier: "Asia/Tokyo")!
        return Set([start, end].compactMap { expression.nextFire(after: $0, in: zone) }.map {
            Scheduler.local($0.timeIntervalSince1970, in: zone)
        })
    }

    @Test(.enabled(if: WebDriver.unavailableReason == nil, "needs a browser: \(WebDriver.unavailableReason ?? "")"))
    func theSchedulesShowTheirNextFireOneIsPausedAndOneRunNowAppearsInItsHistory() throws {
        let before = Date()
        let login = try DashboardLogin(settings: Self.settings, page: "/schedules", showing: "#schedules", width: 1200, height: 800)
        defer { login.close() }
        let after = Date()
        let (agent, browser, base) = (login.agent, login.browser, login.base)

        // Both schedules, active, each with the next fire time its cron gives (Tokyo time).
        let morning = #"tr[data-schedule="morning"]"#, weekly = #"tr[data-schedule="weekly"]"#
        #expect(try browser.text(morning + #" td[data-label="Task"]"#) == "report")
        #expect(try browser.text(morning + #" td[data-label="When"]"#) == "cron \(Self.crons.daily) (Asia/Tokyo)")
        #expect(try browser.text(morning + #" td[data-label="State"]"#) == "active")
        #expect(try browser.text(weekly + #" td[data-label="State"]"#) == "active")
        let morningNext = try browser.text(morning + #" td[data-label="Next"]"#)
        #expect(try Self.nextFires(Self.crons.daily, between: before, and: after).contains(morningNext), "shown: \(morningNext)")
        #expect(morningNext.hasSuffix(Self.crons.dailyTime), "shown: \(morningNext)")
        let weeklyNext = try browser.text(weekly + #" td[data-label="Next"]"#)
        #expect(try Self.nextFires(Self.crons.weekly, between: before, and: after).contains(weeklyNext), "shown: \(weeklyNext)")

        // Pause "weekly" from its form: shown paused, without a next fire, offered Resume.
        try browser.click(try browser.element(weekly + #" button[value="pause"]"#))
        try browser.wait("weekly shown paused") { try browser.text(weekly + #" td[data-label="State"]"#) == "paused" }
        #expect(try browser.text(weekly + #" td[data-label="Next"]"#) == "")
        #expect(try browser.find(weekly + #" button[value="resume"]"#) != nil)
        #expect(try browser.find(weekly + #" button[value="pause"]"#) == nil)
        #expect(try browser.text(morning + #" td[data-label="State"]"#) == "active")
        // The agent has it paused (not only the page).
        let listed = try runProgram("agent-control", ["schedule", "list", "--json", "--settings", agent.settingsFile])
        let paused = listed.stdout.split(separator: "\n").compactMap { try? JSONValue.parse(Data($0.utf8)) }
            .first { $0["name"]?.stringValue == "weekly" }?["paused"]
        #expect(listed.status == 0 && paused == .bool(true), "\(listed.stdout)\(listed.stderr)")

        // Run "morning" now from its form: the browser lands on the run's page, which follows it
        // until it succeeded.
        try browser.click(try browser.element(morning + #" button[value="run"]"#))
        try browser.wait("the run's page") { try browser.find("#run-status") != nil }
        let runURL = try browser.currentURL
        #expect(runURL.contains("/runs/"), "\(runURL)")
        let id = String(runURL.split(separator: "/").last ?? "")
        try browser.wait("the run shown succeeded", timeout: 30) { try browser.text("#run-status") == "succeeded" }

        // The schedule's history (from its link in the list) has the fire with that run, succeeded.
        try browser.navigate(to: base + "/schedules")
        try browser.click(try browser.element(morning + " a"))
        try browser.wait("the history of morning") { try browser.find("#schedule-history") != nil }
        let fire = "#schedule-history tbody tr"
        try browser.wait("the fire in the history") { try browser.text(fire + #" td[data-label="Run"]"#) == id }
        #expect(try browser.text(fire + #" td[data-label="Outcome"]"#) == "fired")
        #expect(try browser.text(fire + #" td[data-label="Planned"]"#) == "(run now)")
        #expect(try browser.text(fire + #" td[data-label="Result"]"#) == "succeeded")
        #expect(try browser.findAll("#schedule-history tbody tr").count == 1)
        // The list shows it as the schedule's last run, with its result linking to it.
        #expect(try browser.text(morning + #" td[data-label="Result"]"#) == "succeeded")
        try browser.click(try browser.element(morning + #" td[data-label="Result"] a"#))
        try browser.wait("the run's page again") { try browser.currentURL.hasSuffix("/runs/" + id) }
        #expect(try browser.text("#run-output").contains("reported"))
    }
}
