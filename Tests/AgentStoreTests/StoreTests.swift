@testable import AgentStore
import AgentTestSupport
import Foundation
import GRDB
import Testing
import Logging

/// The embedded store with the real agent: events, state and history in SQLite, through
/// crashes, a full disk and an unwritable location.
@Suite(.ownThreads, .serialized) struct StoreTests {
    static func feed(interval: Double, extra: String = "") -> String {
        #"{"enabled_modules": ["sample"], \#(extra) "processes": {"trades": {"type": "trade_feed", "pairs": ["A/B"], "interval": \#(interval)}}}"#
    }

    static func control(_ arguments: [String]) throws -> ProgramResult {
        try runProgram("agent-control", arguments)
    }

    static func storePath(_ agent: AgentRun) -> String { agent.directory + "/.agent/data/agent.sqlite" }

    @Test func everyRoutedEventIsStoredAndReadableWithAgentControlEvents() throws {
        let agent = try AgentRun(settings: Self.feed(interval: 0.005))
        #expect(agent.waitForLines(count: 50) { $0.contains(#""type":"trade""#) }.count >= 50, "\(agent.transcript)")
        #expect(agent.stop() == 0)
        let printed = agent.jsonLines.filter { $0["type"] as? String == "trade" }.count
        let reader = try StoreReader(path: Self.storePath(agent))
        let stored = try reader.events(types: ["trade"], since: nil, limit: 100_000, newest: false)
        #expect(stored.count == printed)
        #expect(try reader.integrityCheck() == "ok")

        let listed = try Self.control(["events", "--settings", agent.settingsFile, "--type", "trade", "--limit", "5", "--json"])
        #expect(listed.status == 0)
        let lines = listed.stdout.split(separator: "\n")
        #expect(lines.count == 5)
        #expect(lines.last?.contains(#""source":"trades""#) == true)
        let none = try Self.control(["events", "--settings", agent.settingsFile, "--type", "nothing"])
        #expect(none.stdout.isEmpty)
    }

    @Test func stateSurvivesARestartOfTheWholeAgent() throws {
        let settings = Self.feed(interval: 0.002)
        let first = try AgentRun(settings: settings)
        #expect(first.waitForLine { $0.contains(#""sequence":150,"#) } != nil, "\(first.transcript)")
        #expect(first.stop() == 0)
        let second = try AgentRun(settings: settings, directory: first.directory)
        let line = try #require(second.waitForLine { $0.contains(#""type":"trade""#) }, "\(second.transcript)")
        let payload = try #require((try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])?["payload"] as? [String: Any])
        #expect((payload["sequence"] as? Int ?? 0) > 100, "the feed started over instead of continuing from its saved state")
        #expect(second.stop() == 0)
    }

    @Test func nothingAcknowledgedIsLostWhenTheSupervisorIsKilled() throws {
        try Self.killTheSupervisorAndCheckTheStore(settings: Self.feed(interval: 0.001))
    }

    /// With a subscriber, the feed's events go to it as runs, and to the store as runs too (one
    /// hand-over per run, the checked copy the subscriber gets).
    @Test func nothingAcknowledgedIsLostWhenTheSupervisorIsKilledWhileEventsGoAsRuns() throws {
        let monitor = #""busy": {"type": "trade_frequency", "threshold": 1000000000, "report_every": 0}"#
        try Self.killTheSupervisorAndCheckTheStore(settings: Self.feed(interval: 0.001).replacingOccurrences(of: "}}}", with: "}, \(monitor)}}"))
    }

    /// Kills the agent with SIGKILL once the store acknowledged 2,000 events: every one of them
    /// is there, contiguous, and the next start goes on.
    static func killTheSupervisorAndCheckTheStore(settings: String) throws {
        let agent = try AgentRun(settings: settings, arguments: ["--no-build", "--quiet"])
        #expect(agent.waitForLine(onStderr: true) { $0.contains("[trades] ready in") } != nil, "\(agent.transcript)")
        var acknowledged = 0
        let deadline = Date().addingTimeInterval(60)
        while acknowledged < 2_000, Date() < deadline {
            let status = try Self.control(["status", "--json", "--settings", agent.settingsFile])
            let object = try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any]
            acknowledged = (object?["store"] as? [String: Any])?["committed"] as? Int ?? 0
            Thread.sleep(forTimeInterval: 0.05)
        }
        #expect(acknowledged >= 2_000)
        #expect(agent.stop(signal: SIGKILL) != nil)

        let reader = try StoreReader(path: Self.storePath(agent))
        #expect(try reader.integrityCheck() == "ok")
        let stored = try reader.events(types: ["trade"], since: nil, limit: 1_000_000, newest: false)
        #expect(stored.count >= acknowledged)
        // Contiguous: no acknowledged event is missing in the middle either.
        let sequences = stored.compactMap { event -> Int? in
            (try? JSONSerialization.jsonObject(with: Data(event.payload.utf8)) as? [String: Any])?["sequence"] as? Int
        }
        #expect(sequences == Array(1...sequences.count))

        // The next start finds an intact store and goes on.
        let again = try AgentRun(settings: Self.feed(interval: 0.01), arguments: ["--no-build", "--json"], directory: agent.directory)
        #expect(again.waitForLine { $0.contains(#""type":"trade""#) } != nil, "\(again.transcript)")
        #expect(again.stop() == 0)
        #expect(try StoreReader(path: Self.storePath(agent)).events(types: ["trade"], since: nil, limit: 1_000_000, newest: false).count > stored.count)
    }

    /// The store's figures in `status --json`.
    static func storeStatus(_ agent: AgentRun) throws -> [String: Any] {
        let status = try Self.control(["status", "--json", "--settings", agent.settingsFile])
        let object = try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any]
        return object?["store"] as? [String: Any] ?? [:]
    }

    @Test func aSteadyTrickleOfEventsSharesTransactions() throws {
        // About 1,000 events a second; each would be a transaction of its own if committed
        // at every wake-up of the writer.
        let started = Date()
        let agent = try AgentRun(settings: Self.feed(interval: 0.001, extra: #""store": {"commit_interval": 0.05},"#),
                                 arguments: ["--no-build", "--quiet"])
        #expect(agent.waitForLine(onStderr: true) { $0.contains("[trades] ready in") } != nil, "\(agent.transcript)")
        var store: [String: Any] = [:]
        let deadline = Date().addingTimeInterval(60)
        while store["committed"] as? Int ?? 0 < 1_000, Date() < deadline {
            Thread.sleep(forTimeInterval: 0.05)
            store = try Self.storeStatus(agent)
        }
        let committed = store["committed"] as? Int ?? 0, transactions = store["transactions"] as? Int ?? 0
        #expect(committed >= 1_000, "\(store)")
        // About one commit per interval since the agent started, however fast the feed went
        // (a loaded machine's slower feed shares fewer events per commit, so no ratio of
        // events to commits holds there); a commit per event would be many times more.
        let intervals = Date().timeIntervalSince(started) / 0.05
        #expect(transactions > 0 && Double(transactions) <= 2 * intervals + 2, "\(store) in \(intervals) intervals")
        #expect(agent.stop() == 0)
    }

    @Test func aStateSaveCommitsTheEventsWaitingBeforeIt() throws {
        var settings = StoreSettings()
        // Far past the wait below (and a loaded machine's stall): only the save commits.
        settings.commitInterval = 60
        let folder = FileManager.default.temporaryDirectory.path + "/store-group-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let store = try AgentStore(path: folder + "/agent.sqlite", settings: settings, logger: Logger(label: "test"))
        defer { store.close() }
        for sequence in 1...100 {
            store.append(type: "tick", source: "test", time: Double(sequence), payload: #"{"n":\#(sequence)}"#)
        }
        let saved = DispatchSemaphore(value: 0)
        store.saveState(process: "test", data: Array("{}".utf8)) { _ in saved.signal() }
        #expect(saved.wait(timeout: .now() + 30) == .success)
        // Committed in the state's transaction, not by the interval's commit.
        #expect(store.statistics.committed == 100)
        #expect(store.statistics.batches == 1)
    }

    @Test func fullDiskIsReportedAndTheAgentKeepsRunning() throws {
        let agent = try AgentRun(settings: Self.feed(interval: 0.001), environment: ["AGENT_STORE_MAX_PAGES": "64"])
        let error = agent.waitForLine(onStderr: true) { $0.contains("store: cannot write") }
        #expect(error?.contains("the disk (or the database's size limit) is full") == true, "\(agent.transcript.suffix(2000))")
        #expect(error?.contains("the agent keeps running") == true)
        let before = agent.stdoutLines.count
        let deadline = Date().addingTimeInterval(30)
        while agent.stdoutLines.count <= before + 50, Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
        #expect(agent.stdoutLines.count > before + 50, "events stopped flowing")
        let status = try Self.control(["status", "--json", "--settings", agent.settingsFile])
        let store = (try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any])?["store"] as? [String: Any]
        #expect((store?["degraded"] as? String)?.contains("full") == true)
        #expect((store?["dropped"] as? Int ?? 0) > 0)
        #expect(agent.stop() == 0)
    }

    /// An agent whose store could not be opened (a full disk, a damaged file) ran without it and
    /// answered runs, events and memory writes "ok" that its next start had lost: it does not
    /// start now, saying why and what to do.
    @Test func aStoreThatCannotBeOpenedStopsTheStart() throws {
        let agent = try AgentRun(settings: Self.feed(interval: 0.05, extra: #""store": {"path": "/proc/agent.sqlite"},"#))
        #expect(agent.waitForExit(timeout: 60) == 1, "\(agent.transcript)")
        #expect(agent.stderrLines.contains { $0.contains("/store: cannot open the store /proc/agent.sqlite") && $0.contains("\"enabled\": false") },
                "\(agent.transcript)")
        #expect(agent.stderrLines.contains { $0.contains("nothing was started") }, "\(agent.transcript)")
        #expect(!agent.stdoutLines.contains { $0.contains(#""type":"trade""#) }, "\(agent.transcript)")
    }

    @Test func historyRecordsStartsExitsAndRestarts() throws {
        let agent = try AgentRun(settings: Self.feed(interval: 0.05), arguments: ["--no-build", "--quiet"])
        #expect(agent.waitForLine(onStderr: true) { $0.contains("[trades] ready in") } != nil)
        let pid = try #require(agent.workerPids("trades").first)
        kill(pid, SIGKILL)
        #expect(agent.waitForLines(onStderr: true, count: 2) { $0.contains("[trades] ready in") }.count == 2)
        #expect(agent.stop() == 0)
        let history = try Self.control(["history", "trades", "--settings", agent.settingsFile])
        let events = history.stdout.split(separator: "\n").map { $0.split(separator: " ", omittingEmptySubsequences: true).dropFirst(2).first.map(String.init) ?? "" }
        #expect(events == ["started", "ready", "exit", "backoff", "started", "ready", "stopping", "exit", "stopped"], "\(history.stdout)")
        #expect(history.stdout.contains("exit pid \(pid)  was killed by SIGKILL"))
    }

    /// The store is a file anyone with access may edit: a time no clock can reach is printed
    /// saturated, not a trap of `agent-control history`.
    @Test func historyOfATamperedStoreIsPrintedWithoutATrap() throws {
        let agent = try AgentRun(settings: Self.feed(interval: 0.05), arguments: ["--no-build", "--quiet"])
        #expect(agent.waitForLine(onStderr: true) { $0.contains("[trades] ready in") } != nil)
        #expect(agent.stop() == 0)
        let queue = try DatabaseQueue(path: Self.storePath(agent))
        try queue.write { try $0.execute(sql: "UPDATE history SET time = 1e300 WHERE event = 'ready'") }
        let history = try Self.control(["history", "trades", "--settings", agent.settingsFile])
        #expect(history.status == 0, "\(history.stderr)")
        #expect(history.stdout.contains(" ready "), "\(history.stdout)")
    }
}

/// A monitor's periodic query is checked before anything starts.
@Suite(.ownThreads) struct PeriodicQueryTests {

    @Test func invalidOrWritingQueriesAreSettingsErrors() throws {
        let queries = [
            #"{"name":"typo","sql":"SELEC count(*) FROM events","every":1,"window":60}"#,
            #"{"name":"writes","sql":"DELETE FROM events","every":1,"window":60}"#,
            #"{"name":"unknown","sql":"SELECT count(*) FROM events WHERE time >= :from","every":1,"window":60}"#,
            #"{"name":"nosetting","sql":"SELECT 1","every":"$period","window":60}"#,
        ]
        let library = try CModuleFixture.queryModule("badqueries", queries: "[" + queries.joined(separator: ",") + "]")
        let file = TestPaths.temporaryDirectory("queries") + "/settings.json"
        try #"{"enabled_modules": ["\#(library)"], "processes": {"w": {"type": "watcher"}}}"#.write(toFile: file, atomically: true, encoding: .utf8)
        let result = try runProgram("validate-settings", ["--settings", file])
        #expect(result.status == 2)
        #expect(result.stdout.contains(#"the periodic query "typo" of "watcher" cannot run: the SQL is not valid: near "SELEC": syntax error"#), "\(result.stdout)")
        #expect(result.stdout.contains(#"the periodic query "writes" of "watcher" cannot run: it must only read (SELECT)"#))
        #expect(result.stdout.contains(#"the periodic query "unknown" of "watcher" cannot run: it uses the parameter :from"#))
        #expect(result.stdout.contains(#"the periodic query "nosetting" of "watcher" cannot run: its period comes from the setting "period", which is not a number here"#))
    }

    @Test func validQueryUsingASettingIsAccepted() throws {
        let library = try CModuleFixture.queryModule("goodqueries", queries: #"[{"name":"counts","sql":"SELECT json_extract(payload, '$.' || :key) AS k, count(*) AS n FROM events WHERE time >= :since GROUP BY k","every":10,"window":60}]"#)
        let file = TestPaths.temporaryDirectory("queries") + "/settings.json"
        try #"{"enabled_modules": ["\#(library)"], "processes": {"w": {"type": "watcher"}}}"#.write(toFile: file, atomically: true, encoding: .utf8)
        let result = try runProgram("validate-settings", ["--settings", file])
        #expect(result.status == 0, "\(result.stdout)")
    }

    @Test func sampleMonitorReportsWindowCountsFromTheStore() throws {
        let agent = try AgentRun(settings: """
        {"enabled_modules": ["sample"], "processes": {
          "trades": {"type": "trade_feed", "pairs": ["X/Y"], "interval": 0.01},
          "busy": {"type": "trade_frequency", "window": 5, "threshold": 100000, "report_every": 0.5}}}
        """, arguments: ["--no-build", "--json", "--quiet"])
        let report = agent.waitForLine { $0.contains(#""source":"busy""#) && $0.contains("last 5 s: X/Y ") }
        #expect(report != nil, "\(agent.transcript)")
        #expect(ProcFacts.threadNames(agent.process.processIdentifier).contains("agent-queries"))
        #expect(agent.stop() == 0)
    }

    /// The query thread and its connection are opened at the first need: an agent whose
    /// processes have no periodic query, and that no worker has asked a query of, has neither.
    @Test func anAgentWithoutPeriodicQueriesRunsNoQueryThread() throws {
        let agent = try AgentRun(settings: #"{"enabled_modules": ["sample"], "processes": {"trades": {"type": "trade_feed", "pairs": ["X/Y"], "interval": 0.05}}}"#,
                                 arguments: ["--no-build", "--quiet"])
        #expect(agent.waitForLine(onStderr: true) { $0.contains("[trades] ready in") } != nil, "\(agent.transcript)")
        // The store's writer names itself as it starts (a loaded machine may run it late).
        let pid = agent.process.processIdentifier
        let deadline = Date().addingTimeInterval(30)
        while !ProcFacts.threadNames(pid).contains("agent-store"), Date() < deadline { usleep(20_000) }
        let threads = ProcFacts.threadNames(pid)
        #expect(threads.contains("agent-store"), "\(threads)")
        #expect(!threads.contains("agent-queries"), "\(threads)")
        #expect(agent.stop() == 0)
    }
}

/// Outputs configured in settings receive the agent's events and messages.
@Suite(.ownThreads) struct OutputsEndToEndTests {
    @Test func fileOutputGetsEventsAndMessagesAsJSONLines() throws {
        let agent = try AgentRun(settings: """
        {"enabled_modules": ["sample"], "store": {"enabled": false},
         "outputs": [{"type": "file", "path": "out/agent.jsonl"}, {"type": "file", "path": "out/alerts.jsonl", "kinds": ["message"]}],
         "processes": {"trades": {"type": "trade_feed", "pairs": ["A/B"], "interval": 0.01},
                       "busy": {"type": "trade_frequency", "window": 30, "threshold": 3}}}
        """, arguments: ["--no-build", "--quiet"])
        #expect(agent.waitForLine { $0.contains("A/B: 4 trade events") } != nil, "\(agent.transcript)")
        #expect(agent.stop() == 0)
        let all = try String(contentsOfFile: agent.directory + "/out/agent.jsonl", encoding: .utf8).split(separator: "\n")
        let alerts = try String(contentsOfFile: agent.directory + "/out/alerts.jsonl", encoding: .utf8).split(separator: "\n")
        #expect(all.contains { $0.contains(#""kind":"event""#) && $0.contains(#""type":"trade""#) })
        #expect(all.contains { $0.contains(#""kind":"message""#) })
        #expect(!alerts.isEmpty)
        #expect(alerts.allSatisfy { $0.contains(#""kind":"message""#) })
    }

    @Test func httpsWebhookWithoutLibcurlSaysWhatIsMissingAndTheAgentRunsOn() throws {
        let agent = try AgentRun(settings: """
        {"enabled_modules": ["sample"], "store": {"enabled": false},
         "outputs": [{"type": "webhook", "url": "https://127.0.0.1:9/hook", "batch_size": 1, "retry_initial_delay": 0.05}],
         "processes": {"trades": {"type": "trade_feed", "interval": 0.01}}}
        """, arguments: ["--no-build", "--quiet"], environment: ["AGENT_LIBCURL": "/nonexistent/libcurl.so.4"])
        let failure = agent.waitForLine(onStderr: true) { $0.contains("webhook https://127.0.0.1:9/hook: attempt 1 failed:") }
        #expect(failure?.contains("https webhooks need libcurl (libcurl.so.4, or the library AGENT_LIBCURL names") == true, "\(agent.transcript)")
        #expect(failure?.contains("/nonexistent/libcurl.so.4") == true)
        // The agent goes on (the webhook retries; the stop below is clean).
        #expect(agent.process.isRunning)
        #expect(agent.stop() == 0)
    }

    @Test func outputWithAMissingVariableStartsNothing() throws {
        let agent = try AgentRun(settings: """
        {"enabled_modules": ["sample"], "outputs": [{"type": "webhook", "url": "${env:AGENT_TEST_NO_SUCH_VARIABLE}"}],
         "processes": {"trades": {"type": "trade_feed"}}}
        """)
        #expect(agent.waitForExit(timeout: 60) == 2)
        let error = agent.stderrLines.joined(separator: "\n")
        #expect(error.contains("/outputs/0/url: environment variable AGENT_TEST_NO_SUCH_VARIABLE is not set"), "\(error)")
        #expect(error.contains("nothing was started"))
    }
}

/// Reading a store that does not exist yet says so, naming where it looked.
@Suite(.ownThreads) struct StoreReaderErrorTests {
    @Test func eventsBeforeTheFirstRunIsAClearError() throws {
        let file = TestPaths.temporaryDirectory("nostore") + "/settings.json"
        try #"{"enabled_modules": [], "processes": {}}"#.write(toFile: file, atomically: true, encoding: .utf8)
        let result = try runProgram("agent-control", ["events", "--settings", file])
        #expect(result.status == 1)
        #expect(result.stderr.contains("no store at "), "\(result.stderr)")
        #expect(result.stderr.contains("/.agent/data/agent.sqlite: the agent has not run with the store yet"))
        let badSince = try runProgram("agent-control", ["events", "--settings", file, "--since", "yesterday"])
        #expect(badSince.status != 0)
        #expect(badSince.stderr.contains("--since must be a duration back from now of at most 100 years (30s, 10m, 2h, 1d) or an ISO 8601 time, not \"yesterday\""))
    }
}
