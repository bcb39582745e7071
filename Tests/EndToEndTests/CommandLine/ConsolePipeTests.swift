import AgentTestSupport
import Foundation
import Testing

/// `agent-control console --json | head`: the console's stdout is a pipe whose reader exits.
@Suite(.ownThreads, .serialized) struct ConsolePipeTests {
    @Test func aConsoleWhoseStdoutReaderExitsStopsTheAgentAndExitsZero() throws {
        let directory = TestPaths.temporaryDirectory("console-pipe")
        let settings = directory + "/settings.json"
        try EndToEndTests.sampleAgent.write(toFile: settings, atomically: true, encoding: .utf8)
        // bash for PIPESTATUS: the agent's own exit status, not head's.
        let script = #""$0" console --settings "$1" --no-build --json 2>"$2" | head -n 3 >"$3"; echo "agent exit ${PIPESTATUS[0]}""#
        let result = try runProgram("/bin/bash", ["-c", script, TestPaths.products + "/agent-control", settings,
                                                  directory + "/stderr", directory + "/stdout"], in: directory, timeout: 240)
        let stderr = (try? String(contentsOfFile: directory + "/stderr", encoding: .utf8)) ?? ""
        #expect(result.stdout.contains("agent exit 0"), "\(result.stdout)\(result.stderr)\n\(stderr)")
        let lines = try String(contentsOfFile: directory + "/stdout", encoding: .utf8).split(separator: "\n")
        #expect(lines.count == 3 && lines.allSatisfy { (try? JSONSerialization.jsonObject(with: Data($0.utf8))) != nil }, "\(lines)")
        #expect(stderr.contains("the console's output was closed (its reader exited); stopping all processes"), "\(stderr)")
        #expect(stderr.contains("all workers stopped"), "\(stderr)")
    }

    /// A console in a terminal that is closed (its window, an ssh session) stops: the terminal's
    /// SIGHUP alone is a reload, and the agent ran on headless.
    @Test func aConsoleWhoseTerminalIsClosedStopsTheAgentAndExitsZero() throws {
        let directory = TestPaths.temporaryDirectory("console-pty")
        let settings = directory + "/settings.json"
        try EndToEndTests.sampleAgent.write(toFile: settings, atomically: true, encoding: .utf8)
        // A pty: the agent's controlling terminal (a session of its own, as a shell's would be
        // its job's) and its stdout and stderr; closed once the agent runs.
        let script = #"""
            import fcntl, os, select, subprocess, sys, termios, time
            master, slave = os.openpty()
            def take_terminal():
                os.setsid()
                fcntl.ioctl(slave, termios.TIOCSCTTY, 0)
            agent = subprocess.Popen([sys.argv[1], "console", "--settings", sys.argv[2], "--no-build"],
                                     stdin=subprocess.DEVNULL, stdout=slave, stderr=slave, preexec_fn=take_terminal)
            os.close(slave)
            seen, deadline = b"", time.monotonic() + 120
            while b"control socket:" not in seen and time.monotonic() < deadline:
                if select.select([master], [], [], 1)[0]:
                    try: seen += os.read(master, 65536)
                    except OSError: break
            print("up" if b"control socket:" in seen else "never up: " + seen[-300:].decode(errors="replace"))
            # Closed once its loop runs (it answers): the hang-up comes after every watch is set.
            while time.monotonic() < deadline:
                if subprocess.run([sys.argv[1], "status", "--settings", sys.argv[2]], capture_output=True).returncode == 0: break
                if select.select([master], [], [], 0.1)[0]:
                    try: os.read(master, 65536)
                    except OSError: pass
            os.close(master)
            try: print("agent exit", agent.wait(timeout=60))
            except subprocess.TimeoutExpired:
                print("still running 60 s after its terminal was closed"); agent.kill()
            """#
        let result = try runProgram("/usr/bin/env", ["python3", "-c", script, TestPaths.products + "/agent-control", settings],
                                    in: directory, timeout: 240)
        #expect(result.stdout.contains("up\n"), "\(result.stdout)\(result.stderr)")
        // 0: a clean stop, its workers stopped with it (a signal's death would say otherwise).
        #expect(result.stdout.contains("agent exit 0"), "\(result.stdout)\(result.stderr)")
    }

    @Test func theStartLineSaysWhereTheDashboardIsOrHowToTurnItOn() throws {
        let without = try AgentRun(settings: EndToEndTests.sampleAgent)
        let line = without.waitForLine(onStderr: true) { $0.contains("from another terminal") }
        #expect(line?.contains(#"no dashboard: "http": {"listen": "127.0.0.1:8080", "tokens": ["${env:AGENT_API_TOKEN}"]} in the settings serves it"#) == true, "\(without.transcript)")
        #expect(line?.contains("agent-control status, agent-control chat") == true)
        #expect(without.stop() == 0)

        let with = try AgentRun(settings: #"{"enabled_modules": ["sample"], "http": {"listen": "127.0.0.1:0", "tokens": ["${env:AGENT_API_TOKEN}"]}, "processes": {}}"#,
                                environment: ["AGENT_API_TOKEN": "a-token-of-at-least-32-characters-0123456789"])
        let served = with.waitForLine(onStderr: true) { $0.contains("from another terminal") }
        #expect(served?.range(of: #"dashboard and HTTP API at http://127\.0\.0\.1:[0-9]+/"#, options: .regularExpression) != nil, "\(with.transcript)")
        #expect(with.stop() == 0)
    }
}
