import AgentBase
import AgentCLI
import AgentCore
import AgentRuntime
import AgentStore
import ArgumentParser
import Foundation

/// The store of the agent these options name.
func storeReader(_ agent: SettingsOptions) throws -> StoreReader {
    try openStore(settingsFile: try agent.resolve() ?? SettingsDiscovery.fileName).reader
}

/// The settings in `settingsFile` and the store they name, read-only.
func openStore(settingsFile: String) throws -> (reader: StoreReader, settings: AgentSettings) {
    let settings: AgentSettings
    do {
        settings = try AgentSettings.load(file: settingsFile)
    } catch {
        throw CommandFailure.report("\(error)", exitCode: AgentLauncher.ExitCode.invalidConfiguration)
    }
    do {
        return (try StoreReader(path: settings.store.databasePath(agentDirectory: settings.agentDirectory)), settings)
    } catch {
        throw CommandFailure.report("\(error)")
    }
}

struct Events: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "events",
        abstract: "Show events from the agent's store (it need not be running).",
        discussion: """
        Reads the SQLite store (read-only, beside a running agent). --since takes a duration back \
        from now (30s, 10m, 2h, 1d) or an ISO 8601 time. --type, --source and --run combine (each \
        repeatable); --run takes a task run's or a workflow run's id. --follow keeps printing new \
        events until interrupted.
        """)

    @OptionGroup var agent: SettingsOptions

    @Option(name: .long, help: "Only events of this type (repeatable).")
    var type: [String] = []

    @Option(name: .long, help: "Only events from this process, or the runtime's source (tasks, schedules, workflow:NAME…) (repeatable).")
    var source: [String] = []

    @Option(name: .customLong("run"), help: "Only events about this run: a task run's or a workflow run's id (repeatable).")
    var runIDs: [String] = []

    @Option(name: .long, help: "Only events since then: 30s, 10m, 2h, 1d, or an ISO 8601 time.")
    var since: String?

    @Option(name: .long, help: "At most this many events (the newest), before following.")
    var limit: Int = 100

    @Flag(name: .long, help: "Keep printing new events.")
    var follow = false

    @Flag(name: .long, help: "JSON lines.")
    var json = false

    func validate() throws {
        if let since, TimeSpec.since(since) == nil {
            throw ValidationError("--since must be \(TimeSpec.sinceForm), not \"\(since)\"")
        }
        try checkLimit(limit)
        for (option, values) in [("--type", type), ("--source", source), ("--run", runIDs)] {
            if values.count > 100 { throw ValidationError("\(option) may be given at most 100 times, not \(values.count)") }
            if let bad = values.first(where: { $0.isEmpty || $0.unicodeScalars.contains { $0.properties.generalCategory == .control } }) {
                throw ValidationError("\(option) must be a name without control characters, not \(bad.debugDescription)")
            }
        }
    }

    func run() throws {
        let reader = try storeReader(agent)
        let start = since.flatMap { TimeSpec.since($0) }
        var last: Int64 = 0
        func show(_ events: [StoreReader.StoredEvent]) {
            // A type or payload a module wrote may hold escapes: shown escaped, not obeyed.
            for event in events { print(json ? event.json.serialized() : TerminalText.shown(event.line, keepingLines: false)) }
            last = events.last?.id ?? last
            fflush(nil)
        }
        show(try reader.events(types: type, sources: source, runs: runIDs, since: start, limit: limit, newest: true))
        while follow {
            usleep(200_000)
            show(try reader.events(types: type, sources: source, runs: runIDs, since: start, afterID: last, limit: 10_000, newest: false))
        }
    }
}

struct History: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "history",
        abstract: "Show the run history from the store: starts, readiness, exits, restarts, state changes, commands.")

    @Argument(help: "Only this process.")
    var name: String?

    @OptionGroup var agent: SettingsOptions

    @Option(name: .long, help: "At most this many lines (the newest).")
    var limit: Int = 100

    @Flag(name: .long, help: "JSON lines.")
    var json = false

    func validate() throws { try checkLimit(limit) }

    func run() throws {
        let reader = try storeReader(agent)
        for entry in try reader.history(process: name, limit: limit) {
            let time = ConsoleOutput.timestamp(seconds: entry.time, full: true)
            if json {
                var object: [String: Any] = ["time": time, "process": entry.process, "event": entry.event, "detail": entry.detail]
                if let pid = entry.pid { object["pid"] = Int(pid) }
                if let code = entry.exitCode { object["exit_code"] = Int(code) }
                if let signal = entry.signal { object["signal"] = signal }
                let data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
                print(String(decoding: data, as: UTF8.self))
            } else {
                let pid = entry.pid.map { " pid \($0)" } ?? ""
                print("\(time)  \(entry.process)  \(entry.event)\(pid)\(entry.detail.isEmpty ? "" : "  \(entry.detail)")")
            }
        }
    }
}

/// `--limit` within the bounds `events` and `history` take on every front (the API's
/// `maximum`): the same request answers the same here and over HTTP.
private func checkLimit(_ limit: Int) throws {
    guard (1...10_000).contains(limit) else { throw ValidationError("--limit must be 1 to 10000, not \(limit)") }
}
