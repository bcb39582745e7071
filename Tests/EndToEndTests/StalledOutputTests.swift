import AgentTestSupport
import Foundation
import Testing

/// A reader that stops reading agent-control's stderr or stdout (a paused pager, a terminal
/// held by Ctrl-S, a stalled journal, a `--json` consumer that stalls) must not hold the
/// supervisor's loop, which logs and prints events.
@Suite struct StalledOutputTests {
    /// A sh snippet that makes the agent's descriptor `fd` a pipe of one page (F_SETPIPE_SZ)
    /// whose read end the agent itself holds and nobody reads.
    private static func unreadPipe(on fd: Int) -> String {
        #"""
        exec python3 -c 'import fcntl, os, sys; r, w = os.pipe(); assert fcntl.fcntl(w, 1031, 4096) == 4096; os.set_inheritable(r, True); os.dup2(w, \#(fd)); os.execv(sys.argv[1], sys.argv[1:])' "$0" "$@"
        """#
    }

    @Test func theAgentStartsItsProcessesAndAnswersWhileNobodyReadsItsStderr() throws {
        let count = 40
        let processes = (0..<count).map { #""idle\#($0)": {"type": "bench_idle"}"# }.joined(separator: ", ")
        // The start's lines (two for each process) are several times the pipe.
        let agent = try AgentRun(settings: #"{"enabled_modules": ["bench"], "processes": {\#(processes)}}"#,
                                 arguments: ["--no-build"], shell: Self.unreadPipe(on: 2))
        defer { _ = agent.stop() }
        let socket = agent.directory + "/.agent/run/control.sock"
        var running = 0
        let answered = HTTPAgent.eventually(timeout: 90) {
            guard let status = RawControlClient.request(socket, #"{"command": "status"}"#, timeout: 5),
                  let list = status["processes"] as? [[String: Any]] else { return false }
            running = list.filter { $0["state"] as? String == "running" }.count
            return running == count
        }
        #expect(answered, "\(running) of \(count) processes running by the control socket's answer")
        #expect(agent.stop() == 0)
    }

    @Test func eventsAreRoutedAndStoredAndTheAgentStopsWhileNobodyReadsItsJSONOutput() throws {
        // 20,000 events of ~150 B as JSON lines: 3 MB against a pipe of 4 kB and 1 MiB waiting.
        let agent = try AgentRun(settings: #"""
            {"enabled_modules": ["bench"], "processes": {
              "source": {"type": "bench_source", "count": 20000, "payload_bytes": 64, "rate": 0, "start_delay": 0.2},
              "sink": {"type": "bench_sink"}}}
            """#, arguments: ["--no-build", "--json"], shell: Self.unreadPipe(on: 1))
        defer { _ = agent.stop() }
        let socket = agent.directory + "/.agent/run/control.sock"
        // bench_source's 20,000 and its end mark.
        let all = 20_001
        var seen = "no answer"
        let routed = HTTPAgent.eventually(timeout: 90) {
            guard let status = RawControlClient.request(socket, #"{"command": "status"}"#, timeout: 5),
                  let list = status["processes"] as? [[String: Any]],
                  let store = status["store"] as? [String: Any] else { return false }
            let delivered = list.first { $0["name"] as? String == "sink" }?["events_delivered"] as? Int ?? 0
            let committed = store["committed"] as? Int ?? 0
            seen = "sink took \(delivered), the store committed \(committed)"
            return delivered == all && committed >= all
        }
        #expect(routed, "\(seen) of \(all) events by the control socket's answer")
        // It still stops by request (its last lines wait for the reader at most 2 s).
        #expect(agent.stop() == 0)
        #expect(agent.stderrLines.contains { $0.contains("all workers stopped") }, "\(agent.stderrLines.suffix(5))")
    }
}
