import AgentTestSupport
import Foundation
import Testing

/// A reload that changes a process starts its replacement once the old worker is gone; a
/// second reload before that replaces the waiting replacement, which then never starts.
@Suite(.ownThreads) struct ReloadReplacementTests {
    static func settings(_ process: String) -> String {
        #"{"enabled_modules": ["faults"], "processes": {"c": \#(process)}}"#
    }

    @Test func aReplacementReplacedBeforeTheOldWorkerIsGoneStartsOnceAfterIt() throws {
        // The old worker ignores the stop request, and its stop timeout is longer than the test:
        // it is gone only when the test kills it, after both reloads however slow a loaded
        // machine makes them (with a stop timeout of 2 s, a second reload that came later found
        // the first replacement started, and the test no longer tested what it says).
        let run = try AgentRun(settings: Self.settings(#"{"type": "fault", "mode": "ignore_stop", "stop_timeout": 600}"#),
                               arguments: ["--no-build", "--json"])
        defer { _ = run.stop(signal: SIGKILL, timeout: 10) }
        #expect(run.waitForLine(onStderr: true) { $0.contains("ignoring stop requests") } != nil, "\(run.transcript)")
        let old = try #require(run.workerPids("c").first, "\(run.transcript)")
        for tick in [60, 70] {
            try Self.settings(#"{"type": "fault", "tick_ms": \#(tick)}"#).write(toFile: run.settingsFile, atomically: true, encoding: .utf8)
            let reload = try runProgram("agent-control", ["reload", "--settings", run.settingsFile])
            #expect(reload.status == 0, "\(reload.stdout)\(reload.stderr)")
        }
        // Neither replacement started beside the old worker, which still runs.
        #expect(ProcFacts.isAlive(old) && run.workerPids("c") == [old], "\(run.transcript)")
        kill(old, SIGKILL)
        // Before the fix, the second reload started the newest at once, beside the old worker,
        // and the old one's end started the first replacement too: a worker of a process the
        // settings no longer held, whose descriptors outlived it (a crash at their next event).
        let lines = run.waitForLines(onStderr: true, count: 2) { $0.contains("[c] ready in") }
        #expect(lines.count == 2, "\(run.transcript)")
        let stderr = run.stderrLines
        let oldGone = stderr.firstIndex { $0.contains("[c] worker pid \(old) stopped") }
        let starts = stderr.indices.filter { stderr[$0].contains("[c] started worker pid") }
        #expect(oldGone != nil && starts.count == 2, "\(run.transcript)")
        if let oldGone, starts.count == 2 { #expect(starts[1] > oldGone, "the replacement started before the old worker was gone") }
        let status = try runProgram("agent-control", ["status", "--json", "--settings", run.settingsFile])
        let object = try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any]
        let processes = object?["processes"] as? [[String: Any]] ?? []
        #expect(processes.count == 1 && processes.first?["state"] as? String == "running", "\(status.stdout)")
        #expect(run.stop() == 0, "\(run.transcript)")
    }
}
