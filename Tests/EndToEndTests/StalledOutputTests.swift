import AgentTestSupport
import Foundation
import Testing

/// A reader that stops reading agent-control's stderr or stdout (a paused pager, a terminal
/// held by Ctrl-S, a stalled journal, a `--json` consumer that stalls) must not hold the
/// supervisor's loop, which logs and prints events.
@Suite(.ownThreads) struct StalledOutputTests {
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

    /// `console --json` of a bench_source of `count` events and a bench_sink, started by `shell`.
    private static func sourceAndSink(count: Int, payloadBytes: Int, rate: Int, shell: String,
                                      directory: String = TestPaths.temporaryDirectory("agent")) throws -> AgentRun {
        try AgentRun(settings: """
            {"enabled_modules": ["bench"], "processes": {
              "source": {"type": "bench_source", "count": \(count), "payload_bytes": \(payloadBytes), "rate": \(rate), "start_delay": 0.2},
              "sink": {"type": "bench_sink"}}}
            """, arguments: ["--no-build", "--json"], directory: directory, shell: shell)
    }

    @Test func eventsAreRoutedAndStoredAndTheAgentStopsWhileNobodyReadsItsJSONOutput() throws {
        // 20,000 events of ~150 B as JSON lines: 3 MB against a pipe of 4 kB and 1 MiB waiting.
        let agent = try Self.sourceAndSink(count: 20000, payloadBytes: 64, rate: 0, shell: Self.unreadPipe(on: 1))
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

    /// stdout and stderr one pipe (`2>&1`, systemd's journal stream) read slowly: log lines and
    /// event lines go through one writer, so that neither cuts the other (two threads writing
    /// one pipe did: a log line inside a JSON line, 134 of 14,587 lines).
    @Test func logLinesNeverCutEventLinesWhenStdoutAndStderrAreOneSlowPipe() throws {
        let directory = TestPaths.temporaryDirectory("one-pipe")
        let output = directory + "/both.txt"
        // A slow reader of the pipe (one page): 256 bytes a millisecond into a file until its end; not
        // the agent's child (forked twice, a session of its own), as a `| reader` is not, or
        // the agent's stop would end it with its children.
        let shell = #"""
            exec python3 -c '
            import fcntl, os, sys, time
            r, w = os.pipe()
            assert fcntl.fcntl(w, 1031, 4096) == 4096
            middle = os.fork()
            if middle == 0:
                if os.fork() == 0:
                    os.setsid()
                    os.close(w)
                    with open(sys.argv[1], "wb", buffering=0) as out:
                        while True:
                            chunk = os.read(r, 256)
                            if not chunk: break
                            out.write(chunk)
                            time.sleep(0.001)
                os._exit(0)
            os.waitpid(middle, 0)
            os.close(r); os.dup2(w, 1); os.dup2(w, 2); os.close(w)
            os.execv(sys.argv[2], sys.argv[2:])' "\#(output)" "$0" "$@"
            """#
        // 2,500 events of ~330 B as JSON lines in 2 s, faster than the reader takes them (the pipe
        // stays full, so each write is cut where the reader left room) but under the writer's
        // 1 MiB: however slow a loaded machine makes the reader, nothing is dropped.
        let agent = try Self.sourceAndSink(count: 2500, payloadBytes: 200, rate: 1250, shell: shell, directory: directory)
        defer { _ = agent.stop() }
        let socket = agent.directory + "/.agent/run/control.sock"
        // The agent handles SIGHUP (a reload) once it answers; before, SIGHUP would end it.
        #expect(HTTPAgent.eventually(timeout: 90) { RawControlClient.request(socket, #"{"command": "status"}"#, timeout: 5) != nil })
        // Log lines while the events go: each SIGHUP logs that it was received (a reload).
        var delivered = 0
        let routed = HTTPAgent.eventually(timeout: 90) {
            kill(agent.process.processIdentifier, SIGHUP)
            guard let status = RawControlClient.request(socket, #"{"command": "status"}"#, timeout: 5),
                  let list = status["processes"] as? [[String: Any]] else { return false }
            delivered = list.first { $0["name"] as? String == "sink" }?["events_delivered"] as? Int ?? 0
            return delivered == 2501
        }
        #expect(routed, "the sink took \(delivered) of 2501 events")
        // The reader caught up (the sink's report is its last line) before the stop, whose wait
        // for a slow reader has a bound: a loaded machine's reader is slow.
        var text = ""
        let caughtUp = HTTPAgent.eventually(timeout: 120) {
            text = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
            return text.contains("bench_result")
        }
        #expect(caughtUp, "the sink's report never reached the file; it ends: \(text.suffix(400))")
        #expect(agent.stop() == 0)
        // The reader ends with the pipe's last writer (the agent, its workers).
        let ended = HTTPAgent.eventually(timeout: 60) {
            text = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
            return text.contains("all workers stopped")
        }
        #expect(ended, "the agent's last line never reached the file")
        var events = 0, logLines = 0
        for line in text.split(separator: "\n") {
            if line.hasPrefix("{") {
                let record = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
                #expect(record != nil, "a cut JSON line: \(line.prefix(160))")
                if record?["kind"] as? String == "event" { events += 1 }
            } else if line.contains("line(s) dropped here") {
                // A loaded machine's reader fell behind: the shared writer's notice, a line whole.
                #expect(line.hasPrefix("… "), "a cut notice: \(line.prefix(160))")
            } else {
                // A log line: a time, a level, a text, with nothing of an event inside it.
                #expect(line.range(of: #"^20\d\d-\d\d-\d\dT"#, options: .regularExpression) != nil && !line.contains(#""kind":"#),
                        "a cut line: \(line.prefix(160))")
                logLines += 1
            }
        }
        #expect(events > 0 && logLines > 0, "\(events) event lines, \(logLines) log lines")
    }
}
