import AgentTestSupport
import Foundation
import Testing

/// The real binaries: agent-control supervising agent-worker processes that load the shipped
/// module libraries. Needs `swift build` first (the README's test command does it).
@Suite(.ownThreads, .serialized) struct EndToEndTests {
    static let sampleAgent = """
    {"enabled_modules": ["sample"],
     "processes": {
       "trades": {"type": "trade_feed", "pairs": ["ETH/USD"], "interval": 0.02, "seed": 1},
       "busy": {"type": "trade_frequency", "window": 30, "threshold": 5}
     }}
    """

    @Test func eventsFromTheDatasourceReachTheMonitorAndAnAlertComesOut() throws {
        let agent = try AgentRun(settings: Self.sampleAgent)
        let alert = agent.waitForLine { $0.contains(#""kind":"message""#) && $0.contains(#""source":"busy""#) }
        #expect(alert != nil, "no alert from the monitor:\n\(agent.transcript)")
        let lines = agent.jsonLines
        let trades = lines.filter { $0["kind"] as? String == "event" && $0["type"] as? String == "trade" }
        #expect(trades.count >= 6)
        #expect(trades.first?["source"] as? String == "trades")
        #expect((trades.first?["payload"] as? [String: Any])?["pair"] as? String == "ETH/USD")
        let message = try #require(lines.first { $0["kind"] as? String == "message" })
        #expect(message["level"] as? String == "warning")
        #expect((message["text"] as? String)?.contains("ETH/USD: 6 trade events in the last 30 s (threshold 5)") == true)
        // The monitor's own event is routed too.
        #expect(agent.waitForLine { $0.contains(#""type":"frequency_alert""#) } != nil)
        #expect(agent.stop() == 0)
    }

    @Test func killedWorkerIsRestartedAndStopLeavesNoWorkerBehind() throws {
        let agent = try AgentRun(settings: Self.sampleAgent, arguments: ["--no-build", "--json", "--quiet"])
        #expect(agent.waitForLine(onStderr: true) { $0.contains("[trades] ready in") } != nil, "\(agent.transcript)")
        let first = try #require(agent.workerPids("trades").first)
        kill(first, SIGKILL)
        let restarted = agent.waitForLine(onStderr: true) { $0.contains("[trades] worker pid \(first) was killed by SIGKILL") }
        #expect(restarted?.contains("restarting in 0.10 s (restart 1)") == true, "\(agent.transcript)")
        let ready = agent.waitForLines(onStderr: true, count: 2) { $0.contains("[trades] ready in") }
        #expect(ready.count == 2, "\(agent.transcript)")
        let pids = agent.workerPids("trades") + agent.workerPids("busy")
        #expect(pids.count == 3)
        #expect(agent.stop(signal: SIGINT) == 0, "\(agent.transcript)")
        #expect(pids.allSatisfy { !AgentRun.isAlive($0) })
        #expect(agent.stderrLines.contains { $0.contains("all workers stopped") })
        // Stopped gracefully by the stop request, not killed.
        #expect(agent.stderrLines.filter { $0.contains("stopped (exited with status 0)") }.count == 2, "\(agent.transcript)")
    }

    @Test func stateSavedByAProcessSurvivesTheCrashOfItsWorker() throws {
        let agent = try AgentRun(settings: """
        {"enabled_modules": ["sample"], "processes": {"trades": {"type": "trade_feed", "pairs": ["A/B"], "interval": 0.002}}}
        """)
        func sequences() -> [Int] {
            agent.jsonLines.compactMap { ($0["payload"] as? [String: Any])?["sequence"] as? Int }
        }
        let deadline = Date().addingTimeInterval(60)
        while (sequences().last ?? 0) < 150, Date() < deadline { Thread.sleep(forTimeInterval: 0.02) }
        let before = sequences().count
        let pid = try #require(agent.workerPids("trades").first)
        kill(pid, SIGKILL)
        #expect(agent.waitForLines(onStderr: true, count: 2) { $0.contains("[trades] ready in") }.count == 2, "\(agent.transcript)")
        while sequences().count <= before + 5, Date() < deadline { Thread.sleep(forTimeInterval: 0.02) }
        let after = sequences()
        // The new worker's first sequence continues from the last saved state (every 100th).
        let restartIndex = try #require(after.indices.dropFirst(before).first { after[$0] <= after[$0 - 1] } ?? after.indices.dropFirst(before).first)
        #expect(after[restartIndex] > 100, "sequence restarted from \(after[restartIndex]) instead of the saved state")
        #expect(agent.stop() == 0)
    }

    @Test func workersDieWithAKilledSupervisor() throws {
        let agent = try AgentRun(settings: Self.sampleAgent, arguments: ["--no-build", "--quiet"])
        let ready = agent.waitForLines(onStderr: true, count: 2) { $0.contains("ready in") }
        #expect(ready.count == 2, "\(agent.transcript)")
        let pids = agent.workerPids("trades") + agent.workerPids("busy")
        #expect(agent.stop(signal: SIGKILL) != nil)
        let deadline = Date().addingTimeInterval(60)
        while pids.contains(where: AgentRun.isAlive), Date() < deadline { Thread.sleep(forTimeInterval: 0.02) }
        #expect(!pids.contains(where: AgentRun.isAlive), "workers outlived their supervisor")
    }

    @Test func systemModuleReportsHostStatsAndAlertsOverAThreshold() throws {
        let agent = try AgentRun(settings: """
        {"enabled_modules": ["system"],
         "processes": {
           "host": {"type": "host_stats", "interval": 0.2},
           "limits": {"type": "threshold_monitor", "rules": [{"metric": "memory_percent", "above": 0}]}
         }}
        """)
        let stats = agent.waitForLine { $0.contains(#""type":"host_stats""#) }
        #expect(stats != nil, "\(agent.transcript)")
        let payload = try #require(agent.jsonLines.first { $0["type"] as? String == "host_stats" }?["payload"] as? [String: Any])
        let memory = try #require(payload["memory_percent"] as? Double)
        #expect(memory > 0 && memory <= 100)
        #expect(payload["disk_path"] as? String == "/")
        let alert = agent.waitForLine { $0.contains(#""source":"limits""#) && $0.contains("memory_percent is") }
        #expect(alert?.contains(#""level":"warning""#) == true, "\(agent.transcript)")
        #expect(agent.stop() == 0)
    }

    @Test func invalidSettingsStartNothingAndNameTheFileAndPointer() throws {
        let agent = try AgentRun(settings: """
        {"enabled_modules": ["sample"], "processes": {"trades": {"type": "trade_fed"}}}
        """)
        #expect(agent.waitForExit(timeout: 60) == 2)
        let error = agent.stderrLines.joined(separator: "\n")
        #expect(error.contains("\(agent.settingsFile): /processes/trades/type: unknown process type \"trade_fed\"; did you mean \"trade_feed\"?"), "\(error)")
        #expect(!error.contains("started worker"))
    }

    @Test func unknownModuleSaysWhereItLooked() throws {
        let agent = try AgentRun(settings: #"{"enabled_modules": ["nosuchmodule"], "processes": {}}"#)
        #expect(agent.waitForExit(timeout: 60) == 2)
        let error = agent.stderrLines.joined(separator: "\n")
        #expect(error.contains("module \"nosuchmodule\""))
        #expect(error.contains("module not found; looked in:"))
        #expect(error.contains("add-agent-module nosuchmodule"))
    }

    @Test func invalidModuleSettingsStartNothingAndEveryErrorIsPrinted() throws {
        let agent = try AgentRun(settings: """
        {"enabled_modules": ["sample"], "processes": {
          "trades": {"type": "trade_feed", "interval": "fast", "pairs": []},
          "busy": {"type": "trade_frequency", "window": 10, "treshold": 3}}}
        """)
        #expect(agent.waitForExit(timeout: 60) == 2)
        let error = agent.stderrLines.joined(separator: "\n")
        let file = agent.settingsFile
        #expect(error.contains("invalid settings (3 errors)"), "\(error)")
        #expect(error.contains("\(file): /processes/trades/interval: expected a number ≥ 0.001, found \"fast\" (string)"))
        #expect(error.contains("\(file): /processes/trades/pairs: expected an array with at least 1 item, found 0 items"))
        #expect(error.contains("\(file): /processes/busy: unknown property \"treshold\"; did you mean \"threshold\"?"))
        #expect(error.contains("nothing was started"))
        #expect(!error.contains("started worker"))
    }

    @Test func skipInvalidStartsTheValidProcessesAndReportsTheOthers() throws {
        let agent = try AgentRun(settings: """
        {"enabled_modules": ["sample"], "processes": {
          "good": {"type": "trade_feed", "interval": 0.05},
          "bad": {"type": "trade_feed", "interval": -1}}}
        """, arguments: ["--no-build", "--json", "--skip-invalid"])
        #expect(agent.waitForLine { $0.contains(#""source":"good""#) } != nil, "\(agent.transcript)")
        let log = agent.stderrLines.joined(separator: "\n")
        #expect(log.contains("skipping invalid processes (--skip-invalid)"))
        #expect(log.contains("/processes/bad/interval: expected a number ≥ 0.001, found -1"))
        #expect(agent.workerPids("bad").isEmpty)
        #expect(agent.stop() == 0)
    }

    @Test func workerThatRefusesItsSettingsFailsWithoutARestartLoop() throws {
        let library = try CModuleFixture.build("refuses", source: """
        #include <agent_module.h>
        #include <string.h>
        static int32_t run(const char *t, const char *n, const char *s, size_t l, const agent_host_api *h, char *e, size_t el) {
            (void)t; (void)n; (void)s; (void)l; (void)h;
            strncpy(e, "/path: this path does not exist on this host", el);
            return AGENT_BAD_SETTINGS;
        }
        static const agent_module description = {
            .abi_version = AGENT_MODULE_ABI_VERSION, .struct_size = sizeof(agent_module),
            .manifest_json = "{\\"name\\":\\"refuses\\",\\"version\\":\\"1\\",\\"processes\\":[{\\"type\\":\\"r\\",\\"kind\\":\\"datasource\\"}]}",
            .run_process = run,
        };
        const agent_module *agent_module_entry(void) { return &description; }
        """)
        let agent = try AgentRun(settings: """
        {"enabled_modules": ["\(library)"], "processes": {"r": {"type": "r"}}}
        """)
        let failed = agent.waitForLine(onStderr: true) { $0.contains("not restarting until this is fixed") }
        #expect(failed?.contains("[r] /path: this path does not exist on this host") == true, "\(agent.transcript)")
        Thread.sleep(forTimeInterval: 0.5)
        #expect(agent.workerPids("r").count == 1)
        #expect(agent.stop() == 0)
    }

    @Test func brokenModuleLibraryIsReportedBeforeAnythingStarts() throws {
        let library = try CModuleFixture.module("abi7", manifest: CModuleFixture.validManifest, abiVersion: "7")
        let agent = try AgentRun(settings: """
        {"enabled_modules": ["\(library)"], "processes": {}}
        """)
        #expect(agent.waitForExit(timeout: 60) == 2)
        let error = agent.stderrLines.joined(separator: "\n")
        #expect(error.contains("module \"abi7\" (\(library)): the module speaks module ABI version 7"), "\(error)")
    }
}

/// An agent folder of its own with a module written in C: agent-control builds the stale
/// module with `swift build --product` and runs it.
@Suite(.ownThreads) struct AgentWithItsOwnModuleTests {
    static let cModule = """
    #include <agent_module.h>
    #include <stdio.h>
    #include <string.h>

    static int32_t run(const char *type, const char *name, const char *settings, size_t len,
                       const agent_host_api *host, char *error, size_t error_len) {
        (void)type; (void)name; (void)settings; (void)len; (void)error; (void)error_len;
        const char *payload = "{\\"from\\":\\"c\\"}";
        host->emit(host->host_ctx, "c_tick", 6, (const uint8_t *)payload, strlen(payload));
        host->send_message(host->host_ctx, AGENT_LOG_WARNING, "hello from C", 12);
        printf("stdout of a C module\\n");
        fflush(stdout);
        agent_event event;
        while (host->next_event(host->host_ctx, 1000, &event) != AGENT_STOPPED) {}
        return AGENT_OK;
    }
    static const agent_module description = {
        .abi_version = AGENT_MODULE_ABI_VERSION, .struct_size = sizeof(agent_module),
        .manifest_json = "{\\"name\\":\\"cmod\\",\\"version\\":\\"1.0.0\\",\\"processes\\":[{\\"type\\":\\"c_ticker\\",\\"kind\\":\\"datasource\\",\\"description\\":\\"emits one tick\\",\\"settings_schema\\":{\\"type\\":\\"object\\"}}]}",
        .run_process = run,
    };
    const agent_module *agent_module_entry(void) { return &description; }
    """

    @Test func staleModuleOfTheAgentIsBuiltThenRun() throws {
        let agentDirectory = TestPaths.temporaryDirectory("c-agent")
        let fm = FileManager.default
        try fm.createDirectory(atPath: agentDirectory + "/modules/cmod/include", withIntermediateDirectories: true)
        try fm.copyItem(atPath: TestPaths.abiInclude + "/agent_module.h", toPath: agentDirectory + "/modules/cmod/include/agent_module.h")
        try Self.cModule.write(toFile: agentDirectory + "/modules/cmod/cmod.c", atomically: true, encoding: .utf8)
        try """
        // swift-tools-version: 6.0
        import PackageDescription
        let package = Package(name: "CAgent",
            products: [.library(name: "cmod", type: .dynamic, targets: ["cmod"])],
            targets: [.target(name: "cmod", path: "modules/cmod")])
        """.write(toFile: agentDirectory + "/Package.swift", atomically: true, encoding: .utf8)
        let settings = #"{"enabled_modules": ["cmod"], "processes": {"ticker": {"type": "c_ticker"}}}"#
        try settings.write(toFile: agentDirectory + "/settings.json", atomically: true, encoding: .utf8)

        let agent = try AgentRun(settings: settings, arguments: ["--json"], directory: agentDirectory)
        let tick = agent.waitForLine(timeout: 240) { $0.contains(#""type":"c_tick""#) }
        #expect(tick?.contains(#""payload":{"from":"c"}"#) == true, "\(agent.transcript)")
        #expect(agent.stderrLines.contains { $0.contains("building module cmod") })
        // The build's own output goes to stderr: stdout, the --json stream, holds JSON lines only.
        #expect(agent.stderrLines.contains { $0.contains("Build complete") || $0.contains("Compiling") }, "\(agent.transcript)")
        let notJSON = agent.stdoutLines.filter { (try? JSONSerialization.jsonObject(with: Data($0.utf8))) == nil }
        #expect(notJSON.isEmpty, "stdout lines that are not JSON: \(notJSON)")
        #expect(fm.fileExists(atPath: agentDirectory + "/.build/debug/libcmod.so"))
        #expect(agent.waitForLine { $0.contains("hello from C") } != nil)
        #expect(agent.waitForLine(onStderr: true) { $0.contains("[ticker] stdout of a C module") } != nil, "\(agent.transcript)")
        #expect(agent.stop() == 0)
    }
}
