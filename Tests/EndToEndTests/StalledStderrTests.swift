import AgentTestSupport
import Foundation
import Testing

/// A reader that stops reading agent-control's stderr (a paused pager, a terminal held by
/// Ctrl-S, a stalled journal) must not hold the supervisor's loop, which logs.
@Suite struct StalledStderrTests {
    @Test func theAgentStartsItsProcessesAndAnswersWhileNobodyReadsItsStderr() throws {
        let count = 40
        let processes = (0..<count).map { #""idle\#($0)": {"type": "bench_idle"}"# }.joined(separator: ", ")
        // stderr: a pipe of one page (F_SETPIPE_SZ) whose read end the agent holds and nobody
        // reads; the start's lines (two for each process) are several times that.
        let shell = #"""
            exec python3 -c 'import fcntl, os, sys; r, w = os.pipe(); assert fcntl.fcntl(w, 1031, 4096) == 4096; os.set_inheritable(r, True); os.dup2(w, 2); os.execv(sys.argv[1], sys.argv[1:])' "$0" "$@"
            """#
        let agent = try AgentRun(settings: #"{"enabled_modules": ["bench"], "processes": {\#(processes)}}"#,
                                 arguments: ["--no-build"], shell: shell)
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
}
