@testable import AgentBase
@testable import AgentOutputs
@testable import AgentSupervision
import AgentStore
import AgentTestSupport
import Foundation
import JSONSchema
import Testing
@testable import AgentRuntime

/// Every number in the host's schemas has a sane maximum, reported with its pointer; and
/// `validate-settings` refuses what the running agent would refuse.
@Suite(.ownThreads) struct SettingsBoundsTests {
    private func hostIssues(_ processes: String, extra: String = "") throws -> [SettingsIssue] {
        let json = try JSONValue.parse(Data(#"{"enabled_modules": [], \#(extra) "processes": {\#(processes)}}"#.utf8))
        return AgentSettings(json: json, file: "settings.json").hostIssues
    }

    @Test(arguments: [
        (#""f": {"type": "x", "stop_timeout": 3000000}"#, "/processes/f/stop_timeout", "86400"),
        (#""f": {"type": "x", "stop_timeout": 86400.5}"#, "/processes/f/stop_timeout", "86400"),
        (#""f": {"type": "x", "start_timeout": 1e400}"#, "/processes/f/start_timeout", "86400"),
        (#""f": {"type": "x", "watchdog": 1e400}"#, "/processes/f/watchdog", "86400"),
        (#""f": {"type": "x", "restart": {"initial_delay": 3e6}}"#, "/processes/f/restart/initial_delay", "86400"),
        (#""f": {"type": "x", "restart": {"max_delay": 1e400}}"#, "/processes/f/restart/max_delay", "86400"),
        (#""f": {"type": "x", "restart": {"within": 1e300, "max_restarts": 0}}"#, "/processes/f/restart/within", "604800"),
        (#""f": {"type": "x", "restart": {"reset_after": 1e9}}"#, "/processes/f/restart/reset_after", "604800"),
        (#""f": {"type": "x", "restart": {"multiplier": 1e9}}"#, "/processes/f/restart/multiplier", "1000"),
        (#""f": {"type": "x", "restart": {"max_restarts": 1e23}}"#, "/processes/f/restart/max_restarts", "1000000"),
        (#""f": {"type": "x", "queue": {"limit_bytes": 1e30}}"#, "/processes/f/queue/limit_bytes", "4294967296"),
    ])
    func hostKeyBeyondItsMaximumIsAnErrorWithItsPointer(process: String, pointer: String, bound: String) throws {
        let issues = try hostIssues(process)
        let issue = try #require(issues.first { $0.pointer == pointer }, "\(issues)")
        #expect(issue.message.contains("≤ \(bound)"), "\(issue.message)")
        #expect(issue.process == "f")
    }

    @Test func largestAllowedValuesAreValid() throws {
        let issues = try hostIssues(#"""
        "f": {"type": "x", "stop_timeout": 86400, "start_timeout": 86400, "watchdog": 86400, "queue": {"limit_bytes": 4294967296},
              "restart": {"initial_delay": 86400, "max_delay": 86400, "multiplier": 1000, "reset_after": 604800, "within": 604800, "max_restarts": 1000000}}
        """#, extra: #""store": {"retention": {"max_age": 3155760000, "max_events": 1000000000000, "max_bytes": 1099511627776}, "queue_limit": 10000000},"#)
        #expect(issues.isEmpty, "\(issues)")
    }

    @Test(arguments: [
        (#"{"retention": {"max_age": 1e400}}"#, "/store/retention/max_age"),
        (#"{"retention": {"max_events": 1e30}}"#, "/store/retention/max_events"),
        (#"{"retention": {"max_bytes": 1e13}}"#, "/store/retention/max_bytes"),
        (#"{"queue_limit": 1e12}"#, "/store/queue_limit"),
    ])
    func storeNumbersAreBounded(store: String, pointer: String) throws {
        let issues = try hostIssues("", extra: #""store": \#(store),"#)
        #expect(issues.contains { $0.pointer == pointer && $0.message.contains("≤") }, "\(issues)")
    }

    @Test func aStoreSizeUnderAMebibyteIsRefusedAndNullMeansNoLimit() throws {
        let small = try hostIssues("", extra: #""store": {"retention": {"max_bytes": 65536}},"#)
        #expect(small.contains { $0.pointer == "/store/retention/max_bytes" && $0.message.contains("≥ 1048576") }, "\(small)")
        #expect(try hostIssues("", extra: #""store": {"retention": {"max_bytes": null}},"#).isEmpty)
        #expect(StoreSettings(["retention": ["max_bytes": .null]]).maximumBytes == nil)
        #expect(StoreSettings(nil).maximumBytes == 4 << 30, "the default bounds a flood of events")
    }

    @Test(arguments: [
        (#"{"type": "file", "path": "x", "max_bytes": 1e400}"#, "/outputs/0/max_bytes"),
        (#"{"type": "file", "path": "x", "keep": 1e9}"#, "/outputs/0/keep"),
        (#"{"type": "stdout", "buffer": 1e12}"#, "/outputs/0/buffer"),
        (#"{"type": "webhook", "url": "http://h/", "batch_interval": 1e12}"#, "/outputs/0/batch_interval"),
        (#"{"type": "webhook", "url": "http://h/", "retry_initial_delay": 1e12}"#, "/outputs/0/retry_initial_delay"),
        (#"{"type": "webhook", "url": "http://h/", "retry_max_delay": 1e12}"#, "/outputs/0/retry_max_delay"),
        (#"{"type": "webhook", "url": "https://h/", "timeout": 1e300}"#, "/outputs/0/timeout"),
        (#"{"type": "webhook", "url": "http://h/", "batch_size": 1e9}"#, "/outputs/0/batch_size"),
        (#"{"type": "webhook", "url": "http://h/", "max_retries": 1e9}"#, "/outputs/0/max_retries"),
    ])
    func outputNumbersAreBoundedInTheSchemaAndWhenRead(output: String, pointer: String) throws {
        let issues = try hostIssues("", extra: #""outputs": [\#(output)],"#)
        #expect(issues.contains { $0.pointer == pointer && $0.message.contains("≤") }, "\(issues)")
        // The reader the running agent uses refuses it on its own as well.
        #expect(throws: OutputConfigurationError.self) {
            _ = try OutputConfiguration.list(json: JSONValue.parse(Data("[\(output)]".utf8)))
        }
    }

    @Test func restAdapterTimeoutAndRetriesAreChecked() {
        let problems = BuiltinModules.restProblems(["url": "http://h/", "timeout": .number(JSONNumber(1e300)), "retries": -1], pointer: "/logic_adapters/0")
        #expect(problems.map(\.pointer) == ["/logic_adapters/0/timeout", "/logic_adapters/0/retries"])
        #expect(BuiltinModules.restProblems(["url": "http://h/", "timeout": 5, "retries": 10], pointer: "").isEmpty)
    }

    private func settingsFile(_ text: String) throws -> String {
        let file = TestPaths.temporaryDirectory("bounds") + "/settings.json"
        try text.write(toFile: file, atomically: true, encoding: .utf8)
        return file
    }

    /// What `console` refuses at start, `validate-settings` refuses too, with file and pointer.
    @Test(arguments: [
        (#"{"type": "file", "path": "out.jsonl", "max_bytes": 1e400}"#, "/outputs/0/max_bytes"),
        (#"{"type": "webhook", "url": "http://[::1"}"#, "/outputs/0/url"),
        (#"{"type": "file", "path": "/"}"#, "/outputs/0/path"),
        // Relative to the agent's folder, which exists.
        (#"{"type": "file", "path": "."}"#, "/outputs/0/path"),
    ])
    func validationRefusesOutputsThatConsoleRefuses(output: String, pointer: String) throws {
        let file = try settingsFile(#"{"enabled_modules": [], "processes": {}, "outputs": [\#(output)]}"#)
        let validated = try runProgram("validate-settings", ["--settings", file, "--no-build"])
        #expect(validated.status == 2, "\(validated.stdout)\(validated.stderr)")
        #expect(validated.stdout.hasPrefix("\(file): "), "\(validated.stdout)")
        #expect(validated.stdout.contains("✗ \(pointer): "), "\(validated.stdout)")
        let console = try runProgram("agent-control", ["console", "--settings", file, "--no-build"])
        #expect(console.status == 2, "\(console.stderr)")
        #expect(console.stderr.contains(pointer), "\(console.stderr)")
    }

    /// Module settings a worker cannot decode (beyond Int, or infinite) are refused when
    /// validated, with their pointer, instead of failing the process at start.
    @Test(arguments: [
        (#""tick_ms": 1e400"#, "/processes/f/tick_ms"),
        (#""after_ms": 1e29"#, "/processes/f/after_ms"),
    ])
    func moduleIntegersBeyondIntAreRefusedByValidation(setting: String, pointer: String) throws {
        let file = try settingsFile(#"{"enabled_modules": ["faults"], "processes": {"f": {"type": "fault", \#(setting)}}}"#)
        let validated = try runProgram("validate-settings", ["--settings", file, "--no-build"])
        #expect(validated.status == 2, "\(validated.stdout)\(validated.stderr)")
        #expect(validated.stdout.contains("\(pointer): expected"), "\(validated.stdout)")
    }
}

/// The reproducers of the supervisor crashes, against the real `agent-control console` and
/// the faults module: each used to kill the supervisor (SIGILL) and is now either refused
/// with its pointer before anything starts, or, at the largest valid value, runs and stops
/// cleanly.
@Suite(.ownThreads) struct HugeTimerEndToEndTests {
    private func console(_ processes: String) throws -> AgentRun {
        try AgentRun(settings: #"{"enabled_modules": ["faults"], "store": {"enabled": false}, "processes": {\#(processes)}}"#,
                     arguments: ["--no-build", "--quiet"])
    }

    /// Waits until the agent exits or its workers are ready; then SIGTERM. The exit status,
    /// and whether the agent died of a signal.
    private func outcome(_ run: AgentRun, ready: Int = 1) -> (status: Int32?, signalled: Bool) {
        let deadline = Date().addingTimeInterval(60)
        while run.process.isRunning, Date() < deadline,
              run.stderrLines.filter({ $0.contains("ready in") }).count < ready {
            Thread.sleep(forTimeInterval: 0.02)
        }
        // An agent that exited on its own: its last lines are read once its pipes are drained
        // (waitForExit), not when Foundation says it ended (a CI run read the stderr before them).
        let status = run.process.isRunning ? run.stop() : run.waitForExit(timeout: 45)
        return (status, !run.process.isRunning && run.process.terminationReason == .uncaughtSignal)
    }

    @Test(arguments: [
        (#""f": {"type": "fault", "stop_timeout": 3000000}"#, ["/processes/f/stop_timeout"]),
        (#""f": {"type": "fault", "mode": "exit", "after_ms": 0, "restart": {"initial_delay": 3e6, "max_delay": 1e400}}"#,
         ["/processes/f/restart/initial_delay", "/processes/f/restart/max_delay"]),
        (#""f": {"type": "fault", "mode": "exit", "after_ms": 0, "restart": {"within": 1e300, "max_restarts": 0}}"#, ["/processes/f/restart/within"]),
        (#""f": {"type": "fault", "start_timeout": 1e400, "watchdog": 1e400}"#, ["/processes/f/start_timeout", "/processes/f/watchdog"]),
        (#""f": {"type": "fault", "restart": {"max_restarts": 1e23}, "queue": {"limit_bytes": 1e30}}"#,
         ["/processes/f/restart/max_restarts", "/processes/f/queue/limit_bytes"]),
    ])
    func hugeTimersAreRefusedWithTheirPointersAndNothingStarts(processes: String, pointers: [String]) throws {
        let run = try console(processes)
        let (status, signalled) = outcome(run)
        #expect(!signalled, "the supervisor died of a signal:\n\(run.transcript)")
        #expect(status == 2, "\(run.transcript)")
        let errors = run.stderrLines.joined(separator: "\n")
        for pointer in pointers { #expect(errors.contains("settings.json: \(pointer): expected"), "\(errors)") }
        #expect(errors.contains("nothing was started"))
    }

    @Test func largestTimeoutsAndDelaysRunAndStopCleanlyOnSIGTERM() throws {
        let run = try console(#"""
        "slow": {"type": "fault", "stop_timeout": 86400, "start_timeout": 86400, "watchdog": 86400},
        "crash": {"type": "fault", "mode": "exit", "after_ms": 0, "restart": {"initial_delay": 86400, "max_delay": 86400}},
        "limited": {"type": "fault", "mode": "exit", "after_ms": 0, "restart": {"within": 604800, "max_restarts": 0}}
        """#)
        #expect(run.waitForLine(onStderr: true) { $0.contains("[crash]") && $0.contains("restarting in 86400.00 s") } != nil, "\(run.transcript)")
        let failed = run.waitForLine(onStderr: true) { $0.contains("[limited]") && $0.contains("the start limit") }
        #expect(failed?.contains("restarted 0 times within 604800 s (the start limit)") == true, "\(run.transcript)")
        #expect(run.waitForLine(onStderr: true) { $0.contains("[slow] ready in") } != nil)
        let started = Date()
        #expect(run.stop() == 0, "\(run.transcript)")
        #expect(run.process.terminationReason == .exit)
        #expect((run.exitedAt ?? Date()).timeIntervalSince(started) < 30)
        #expect(run.stderrLines.contains { $0.contains("[slow] worker pid") && $0.contains("stopped (exited with status 0)") }, "\(run.transcript)")
    }
}
