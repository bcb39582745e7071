import AgentTestSupport
import Foundation
import GRDB

/// Agent folders for the jsonl/1 tests: the test programs' module (Tests/Fixtures/pyfix, with
/// the SDK's agentruntime.py beside them, as add-agent-module lays out a Python module) and
/// the examples (examples/jsonl) copied into `modules/`, and the real agent-control on them.
enum JSONLinesFixture {
    /// A new agent folder holding `modules` (`pyfix` or an example's name).
    static func directory(_ label: String, modules: [String] = ["pyfix"]) throws -> String {
        let directory = TestPaths.temporaryDirectory(label)
        try FileManager.default.createDirectory(atPath: directory + "/modules", withIntermediateDirectories: true)
        for module in modules {
            let target = directory + "/modules/" + module
            if module == "pyfix" {
                try FileManager.default.copyItem(atPath: TestPaths.repository + "/Tests/Fixtures/pyfix", toPath: target)
                try FileManager.default.copyItem(atPath: TestPaths.repository + "/SDK/Python/agentruntime.py", toPath: target + "/agentruntime.py")
            } else {
                try FileManager.default.copyItem(atPath: TestPaths.repository + "/examples/jsonl/" + module, toPath: target)
            }
        }
        return directory
    }

    /// Starts an agent with `modules` enabled (the runtime's own ones too: faults, sample) and
    /// `processes` (the members of the processes object); `rest` adds top-level members.
    static func start(_ processes: String, rest: String = "", modules: [String] = ["pyfix"], runtimeModules: [String] = [],
                      label: String = "jsonl", directory: String? = nil) throws -> AgentRun {
        let directory = try directory ?? Self.directory(label, modules: modules)
        let enabled = (modules + runtimeModules).map { "\"\($0)\"" }.joined(separator: ", ")
        let settings = #"{"enabled_modules": [\#(enabled)], "processes": {\#(processes)}\#(rest.isEmpty ? "" : ", " + rest)}"#
        return try AgentRun(settings: settings, arguments: ["--no-build", "--json"], directory: directory)
    }

    /// Waits until the agent answers `status` (its control socket is up).
    static func waitUntilAnswering(_ run: AgentRun) -> Bool {
        wait { (try? runProgram("agent-control", ["status", "--settings", run.settingsFile]))?.status == 0 ? true : nil } ?? false
    }

    /// The events of `type` in the agent's store (its default path), oldest first: source and payload.
    static func storedEvents(_ directory: String, type: String) throws -> [(source: String, payload: String)] {
        try DatabaseQueue(path: directory + "/.agent/data/agent.sqlite").read { db in
            try Row.fetchAll(db, sql: "SELECT source, payload FROM events WHERE type = ? ORDER BY id", arguments: [type])
                .map { (source: $0["source"], payload: $0["payload"]) }
        }
    }

    /// The state the store keeps for `process`, as text.
    static func storedState(_ directory: String, process: String) throws -> String? {
        try DatabaseQueue(path: directory + "/.agent/data/agent.sqlite").read { db in
            try Data.fetchOne(db, sql: "SELECT data FROM state WHERE process = ?", arguments: [process]).map { String(decoding: $0, as: UTF8.self) }
        }
    }

    /// Waits until `probe` gives a value, for at most `timeout` seconds.
    static func wait<T>(timeout: Double = 60, _ probe: () -> T?) -> T? {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if let value = probe() { return value }
            Thread.sleep(forTimeInterval: 0.05)
        }
        return nil
    }

    /// Events of `type` on the agent's stdout (`--json`), decoded.
    static func events(_ run: AgentRun, type: String) -> [[String: Any]] {
        run.jsonLines.filter { $0["type"] as? String == type }
    }
}
