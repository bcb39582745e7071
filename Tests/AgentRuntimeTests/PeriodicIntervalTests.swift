import AgentTestSupport
import Foundation
import JSONSchema
import Testing
@testable import AgentRuntime

/// Every setting that sets the pace of a repeating timer has a shortest period
/// (``SettingsBounds/shortestPeriod``): `1e-300` validated before, and its timer ran back to
/// back (`report_every: 1e-300` kept a core a quarter busy).
@Suite(.ownThreads) struct PeriodicIntervalTests {
    @Test func aTinyPeriodIsRefusedByValidateSettingsAtItsPointer() throws {
        let file = TestPaths.temporaryDirectory("periods") + "/settings.json"
        try #"""
        {"enabled_modules": ["sample"], "processes": {
          "busy": {"type": "trade_frequency", "window": 5, "threshold": 10, "report_every": 1e-300},
          "trades": {"type": "trade_feed", "pairs": ["A/B"], "watchdog": 1e-300, "start_timeout": 1e-300}}}
        """#.write(toFile: file, atomically: true, encoding: .utf8)
        let result = try runProgram("validate-settings", ["--settings", file, "--json"])
        #expect(result.status == 2, "\(result.stdout)\(result.stderr)")
        let report = try JSONValue.parse(result.stdout)
        let issues = report["errors"]?.arrayValue ?? []
        func message(at pointer: String) -> String? {
            issues.first { $0["pointer"]?.stringValue == pointer }?["message"]?.stringValue
        }
        let query = try #require(message(at: "/processes/busy/report_every"), "\(result.stdout)")
        #expect(query.contains(#"its period (the setting "report_every") must be 0 (never) or 0.1 to 86400 seconds, found 1e-300"#), "\(query)")
        #expect(message(at: "/processes/trades/watchdog") != nil, "\(result.stdout)")
        let start = try #require(message(at: "/processes/trades/start_timeout"), "\(result.stdout)")
        #expect(start.contains("≥ 0.1"), "\(start)")
    }

    @Test func theShortestPeriodsAndZeroForNoWatchdogAreValid() throws {
        let json = try JSONValue.parse(#"""
        {"enabled_modules": [], "processes": {
          "a": {"type": "x", "watchdog": 0.1, "start_timeout": 0.1}, "b": {"type": "x", "watchdog": 0}, "c": {"type": "x", "watchdog": null}}}
        """#)
        #expect(AgentSettings(json: json, file: "settings.json").hostIssues.isEmpty)
        let tiny = try JSONValue.parse(#"{"enabled_modules": [], "processes": {"a": {"type": "x", "watchdog": 0.05}}}"#)
        let issues = AgentSettings(json: tiny, file: "settings.json").hostIssues
        let watchdog = try #require(issues.first { $0.pointer == "/processes/a/watchdog" }, "\(issues)")
        #expect(watchdog.message.contains("0.1"), "\(watchdog.message)")
    }
}
