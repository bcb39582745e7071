@testable import AgentBase
@testable import AgentCommands
import AgentTestSupport
import Foundation
import Testing

/// `GET /metrics`, `/livez` and `/readyz` of a real agent-control with `"http"` on port 0,
/// scraped over real connections while its real workers run, crash and are killed.
@Suite(.ownThreads) struct MetricsAndHealthTests {
    static let token = APIAgent.adminToken

    /// Starts an agent with the HTTP front; returns it with the port it listens on.
    private func agent(_ body: String) throws -> (AgentRun, Int) {
        let run = try AgentRun(settings: body, arguments: ["--no-build", "--json"], environment: APIAgent.environment)
        let line = run.waitForLine(onStderr: true) { $0.contains("http: listening on http://127.0.0.1:") }
        let port = line?.components(separatedBy: "http://127.0.0.1:").last.flatMap { Int($0.prefix { $0.isNumber }) }
        guard let port else {
            _ = run.stop()
            throw HTTPProbe.Failure(description: "the agent did not say where it listens:\n\(run.transcript)")
        }
        return (run, port)
    }

    private func scrape(_ port: Int) throws -> (HTTPProbe.Answer, PrometheusExposition) {
        let answer = try HTTPProbe.get("/metrics", port: port, token: Self.token)
        return (answer, try PrometheusExposition(answer.body))
    }

    /// Scrapes until `condition` holds (at most `timeout` seconds); returns the last scrape.
    private func scrape(_ port: Int, timeout: Double = 30, until condition: (PrometheusExposition) -> Bool) throws -> PrometheusExposition {
        let deadline = Date().addingTimeInterval(timeout)
        var last = try scrape(port).1
        while !condition(last), Date() < deadline {
            Thread.sleep(forTimeInterval: 0.1)
            last = try scrape(port).1
        }
        return last
    }

    private func waitForReadyz(_ port: Int, status: Int, timeout: Double = 30, where check: (HTTPProbe.Answer) -> Bool = { _ in true }) throws -> HTTPProbe.Answer {
        let deadline = Date().addingTimeInterval(timeout)
        var last = try HTTPProbe.get("/readyz", port: port, token: Self.token)
        while !(last.status == status && check(last)), Date() < deadline {
            Thread.sleep(forTimeInterval: 0.1)
            last = try HTTPProbe.get("/readyz", port: port, token: Self.token)
        }
        return last
    }

    private func reasons(_ answer: HTTPProbe.Answer) -> [String] { answer.json["reasons"] as? [String] ?? [] }

    static let processes = #"""
        "ticker": {"type": "fault", "mode": "healthy", "tick_ms": 20},
        "echo": {"type": "relay", "out_type": "echoed", "burst": 0, "subscribe": ["fault_tick"]},
        "off": {"type": "fault", "enabled": false}
        """#

    @Test func metricsHaveEveryFamilyWithItsTypeAndLabelsInTheExpositionFormat() throws {
        let (run, port) = try agent(#"""
            {"enabled_modules": ["faults"], "http": {"listen": "127.0.0.1:0", "tokens": ["${env:AGENT_API_TOKEN}"]},
             "outputs": [{"type": "file", "path": "out/agent.jsonl"}],
             "processes": {\#(Self.processes)}}
            """#)
        defer { _ = run.stop() }
        // Requests whose routes must be counted by their templates, never by their paths.
        #expect(try HTTPProbe.get("/api/status", port: port, token: Self.token).status == 200)
        // Refused: no such process (the status depends on how the command says so).
        let refusal = try HTTPProbe.request("POST", "/api/processes/no-such-process/stop", port: port, token: Self.token).status
        #expect(refusal == 404 || refusal == 409)
        #expect(try HTTPProbe.get("/no/such/route-x", port: port, token: Self.token).status == 404)

        let metrics = try scrape(port) { ($0.value("agent_process_state", ["process": "echo", "state": "running"]) ?? 0) == 1
            && ($0.value("agent_process_events_delivered_total", ["process": "echo"]) ?? 0) > 0 }
        let (answer, _) = try scrape(port)
        #expect(answer.status == 200)
        #expect(answer.headers["content-type"] == "text/plain; version=0.0.4; charset=utf-8")

        let expected: [(String, String, Set<String>)] = [
            ("agent_uptime_seconds", "gauge", []),
            ("agent_events_routed_total", "counter", []),
            ("agent_event_deliveries_total", "counter", []),
            ("agent_events_dropped_total", "counter", []),
            ("agent_restarts_total", "counter", []),
            ("agent_chat_requests_total", "counter", []),
            ("agent_loop_longest_turn_seconds", "gauge", []),
            ("agent_loop_slow_turns_total", "counter", []),
            ("agent_process_state", "gauge", ["process", "state"]),
            ("agent_process_restarts_total", "counter", ["process"]),
            ("agent_process_events_emitted_total", "counter", ["process"]),
            ("agent_process_events_delivered_total", "counter", ["process"]),
            ("agent_process_events_dropped_total", "counter", ["process"]),
            ("agent_process_queue_bytes", "gauge", ["process"]),
            ("agent_process_paused", "gauge", ["process"]),
            ("agent_process_cpu_seconds_total", "counter", ["process"]),
            ("agent_process_resident_memory_bytes", "gauge", ["process"]),
            ("agent_supervisor_cpu_seconds_total", "counter", []),
            ("agent_supervisor_resident_memory_bytes", "gauge", []),
            ("agent_store_committed_events_total", "counter", []),
            ("agent_store_transactions_total", "counter", []),
            ("agent_store_dropped_events_total", "counter", []),
            ("agent_store_dropped_chat_lines_total", "counter", []),
            ("agent_store_dropped_history_lines_total", "counter", []),
            ("agent_store_write_errors_total", "counter", []),
            ("agent_store_pending_events", "gauge", []),
            ("agent_store_degraded", "gauge", []),
            ("agent_store_retained_changes", "gauge", []),
            ("agent_store_lost_changes_total", "counter", []),
            ("agent_output_delivered_total", "counter", ["output", "type"]),
            ("agent_output_dropped_total", "counter", ["output", "type"]),
            ("agent_output_failed_attempts_total", "counter", ["output", "type"]),
            ("agent_output_queued_records", "gauge", ["output", "type"]),
            ("agent_http_requests_total", "counter", ["route", "method", "status"]),
        ]
        for (name, type, labels) in expected {
            let family = metrics.families[name]
            #expect(family?.type == type, "\(name): \(family?.type ?? "missing")\n\(answer.body)")
            #expect(family?.help?.isEmpty == false || name == "agent_http_requests_total", "\(name) has no help")
            #expect(family?.samples.isEmpty == false, "\(name) has no sample")
            for sample in family?.samples ?? [] { #expect(Set(sample.labels.keys) == labels, "\(name): \(sample.labels)") }
            #expect(!name.hasSuffix("_total") || type == "counter", "\(name)")
        }
        for family in metrics.families.values { #expect(family.name.hasPrefix("agent_"), "\(family.name)") }

        // One state per process is 1: running for the running ones, disabled for the disabled one.
        for (process, current) in [("ticker", "running"), ("echo", "running"), ("off", "disabled")] {
            let states = metrics.families["agent_process_state"]?.samples.filter { $0.labels["process"] == process } ?? []
            #expect(states.count == AgentSnapshot.stateNames.count)
            #expect(states.filter { $0.value == 1 }.map { $0.labels["state"] } == [current], "\(process): \(states)")
        }
        #expect((metrics.value("agent_process_resident_memory_bytes", ["process": "ticker"]) ?? 0) > 1_000_000)
        #expect(metrics.value("agent_output_delivered_total", ["output": "file out/agent.jsonl", "type": "file"]) != nil, "\(answer.body)")
        #expect(metrics.value("agent_store_degraded") == 0)

        // Requests by route template and status: no label holds a client's path.
        let requests = metrics.families["agent_http_requests_total"]?.samples ?? []
        #expect(requests.contains { $0.labels == ["route": "/api/status", "method": "GET", "status": "200"] && $0.value >= 1 }, "\(requests)")
        #expect(requests.contains { $0.labels == ["route": "/api/processes/{name}/stop", "method": "POST", "status": String(refusal)] }, "\(requests)")
        #expect(requests.contains { $0.labels == ["route": "unmatched", "method": "GET", "status": "404"] }, "\(requests)")
        #expect(!answer.body.contains("no-such-process") && !answer.body.contains("route-x"))
    }

    @Test func metricsMoveWithTheAgentRestartsAfterAKillAndEventsGrow() throws {
        let (run, port) = try agent(#"""
            {"enabled_modules": ["faults"], "http": {"listen": "127.0.0.1:0", "tokens": ["${env:AGENT_API_TOKEN}"]}, "processes": {\#(Self.processes)}}
            """#)
        defer { _ = run.stop() }
        let first = try scrape(port) { ($0.value("agent_process_events_emitted_total", ["process": "ticker"]) ?? 0) > 0 }
        let emitted = first.value("agent_process_events_emitted_total", ["process": "ticker"]) ?? 0
        let routed = first.value("agent_events_routed_total") ?? 0
        #expect(emitted > 0)
        #expect(first.value("agent_process_restarts_total", ["process": "ticker"]) == 0)
        #expect(first.value("agent_restarts_total") == 0)

        let pid = try #require(run.workerPids("ticker").first)
        kill(pid, SIGKILL)
        // Until the new worker has emitted too (running is not yet emitting, on a loaded machine).
        let later = try scrape(port) { ($0.value("agent_process_restarts_total", ["process": "ticker"]) ?? 0) == 1
            && $0.value("agent_process_state", ["process": "ticker", "state": "running"]) == 1
            && ($0.value("agent_process_events_emitted_total", ["process": "ticker"]) ?? 0) > emitted
            && ($0.value("agent_events_routed_total") ?? 0) > routed }
        #expect(later.value("agent_process_restarts_total", ["process": "ticker"]) == 1, "\(run.transcript)")
        #expect(later.value("agent_restarts_total") == 1)
        #expect((later.value("agent_process_events_emitted_total", ["process": "ticker"]) ?? 0) > emitted)
        #expect((later.value("agent_events_routed_total") ?? 0) > routed)
        #expect((later.value("agent_store_committed_events_total") ?? 0) > 0)

        // The JSON form of the same command.
        let json = try HTTPProbe.get("/api/metrics", port: port, token: Self.token)
        #expect(json.status == 200)
        let families = json.json["families"] as? [[String: Any]] ?? []
        #expect(families.contains { $0["name"] as? String == "agent_process_restarts_total" && $0["type"] as? String == "counter" })
    }

    @Test func livezAnswersWithoutCredentialsAndTheOthersNeedThem() throws {
        let (run, port) = try agent(#"""
            {"enabled_modules": ["faults"], "processes": {"ticker": {"type": "fault"}},
             "http": {"listen": "127.0.0.1:0", "tokens": ["${env:AGENT_API_TOKEN}", {"token": "${env:AGENT_READ_TOKEN}", "role": "read"}]}}
            """#)
        defer { _ = run.stop() }
        // The probe of liveness needs no credentials; readiness and metrics do, like the API.
        let answer = try HTTPProbe.get("/livez", port: port)
        #expect(answer.status == 200)
        #expect(answer.json["ok"] as? Bool == true)
        for path in ["/readyz", "/metrics", "/api/metrics", "/api/readiness"] {
            #expect(try HTTPProbe.get(path, port: port).status == 401, "\(path)")
            #expect(try HTTPProbe.get(path, port: port, token: "wrong-token-0123456789abcdef").status == 401, "\(path)")
        }
        #expect(try HTTPProbe.get("/readyz", port: port, token: APIAgent.readToken).status != 401)
        #expect(try HTTPProbe.get("/metrics", port: port, token: APIAgent.readToken).status == 200)
    }

    @Test func readyzSaysWhyWhileAProcessFlapsOrFailsAndIsReadyAgainOnceItRecovers() throws {
        func settings(_ flaky: String) -> String {
            #"""
            {"enabled_modules": ["faults"], "store": {"enabled": false},
             "http": {"listen": "127.0.0.1:0", "tokens": ["${env:AGENT_API_TOKEN}"], "readiness": {"failures": 3, "window": 60}},
             "processes": {"steady": {"type": "fault", "mode": "healthy", "tick_ms": 200}, "flaky": \#(flaky)}}
            """#
        }
        let healthy = #"{"type": "fault", "mode": "healthy", "tick_ms": 200}"#
        // Crashes every 150 ms and is restarted within its start limit: flapping, not failed.
        let flapping = #"{"type": "fault", "mode": "exit", "after_ms": 150, "tick_ms": 50, "restart": {"initial_delay": 0.05, "max_restarts": 1000, "within": 60}}"#
        // Crashes and fails at its start limit.
        let failing = #"{"type": "fault", "mode": "exit", "after_ms": 50, "tick_ms": 10, "restart": {"initial_delay": 0.05, "max_restarts": 1, "within": 60}}"#
        let (run, port) = try agent(settings(flapping))
        defer { _ = run.stop() }
        // Returns once the reload is applied: a readiness read before it still sees the old
        // process (a flapping one can read as ready between its crashes on a loaded machine).
        let reload = { (flaky: String) in
            let before = run.transcript.components(separatedBy: "reloaded: ").count
            try settings(flaky).write(toFile: run.settingsFile, atomically: true, encoding: .utf8)
            kill(run.process.processIdentifier, SIGHUP)
            #expect(HTTPAgent.eventually { run.transcript.components(separatedBy: "reloaded: ").count > before }, "the reload was not applied:\n\(run.transcript)")
        }

        let flappingAnswer = try waitForReadyz(port, status: 503) { self.reasons($0).contains { $0.hasPrefix("flaky: flapping: ") } }
        #expect(flappingAnswer.status == 503, "\(flappingAnswer.body)\n\(run.transcript)")
        #expect(flappingAnswer.json["ok"] as? Bool == false)
        #expect(reasons(flappingAnswer).allSatisfy { $0.hasPrefix("flaky: ") }, "\(flappingAnswer.body)")
        #expect(reasons(flappingAnswer).first?.contains("failures within 60 s (last: exited with status 1)") == true, "\(flappingAnswer.body)")

        // Fixed by a reload: ready again.
        try reload(healthy)
        let recovered = try waitForReadyz(port, status: 200)
        #expect(recovered.status == 200, "\(recovered.body)\n\(run.transcript)")
        #expect(recovered.json["ok"] as? Bool == true)
        #expect(reasons(recovered).isEmpty)

        // One crash is not unreadiness: the killed process restarts and the agent stays ready.
        let steady = try #require(run.workerPids("steady").first)
        kill(steady, SIGKILL)
        let restarted = try scrape(port) { $0.value("agent_process_restarts_total", ["process": "steady"]) == 1 }
        #expect(restarted.value("agent_process_restarts_total", ["process": "steady"]) == 1)
        // Ready again once its replacement is (on a loaded machine it may still be starting at
        // the first look); never flapping or failed for one crash.
        var meanwhile: [String] = []
        var afterOneCrash = try HTTPProbe.get("/readyz", port: port, token: Self.token)
        let deadline = Date().addingTimeInterval(60)
        while afterOneCrash.status != 200, Date() < deadline {
            meanwhile += reasons(afterOneCrash)
            Thread.sleep(forTimeInterval: 0.1)
            afterOneCrash = try HTTPProbe.get("/readyz", port: port, token: Self.token)
        }
        #expect(afterOneCrash.status == 200, "\(afterOneCrash.body)")
        #expect(!meanwhile.contains { $0.contains("flapping") || $0.contains("failed") }, "\(meanwhile)")

        // A process failed at its start limit: 503 saying so, until a reload fixes it.
        try reload(failing)
        let failed = try waitForReadyz(port, status: 503) { self.reasons($0).contains { $0.hasPrefix("flaky: failed (") } }
        #expect(reasons(failed).contains { $0.hasPrefix("flaky: failed (restarted 1 times within 60 s (the start limit)") }, "\(failed.body)\n\(run.transcript)")
        try reload(healthy)
        let again = try waitForReadyz(port, status: 200)
        #expect(again.status == 200, "\(again.body)\n\(run.transcript)")
    }

    @Test func aStoppedProcessMakesTheAgentUnreadyAndStatusRightAfterTheStopSeesIt() throws {
        let (run, port) = try agent(#"{"enabled_modules": ["faults"], "store": {"enabled": false}, "http": {"listen": "127.0.0.1:0", "tokens": ["${env:AGENT_API_TOKEN}"]}, "processes": {"ticker": {"type": "fault"}, "other": {"type": "fault"}}}"#)
        defer { _ = run.stop() }
        #expect(try waitForReadyz(port, status: 200).status == 200)
        let stop = try HTTPProbe.request("POST", "/api/processes/ticker/stop", port: port, token: Self.token)
        #expect(stop.status == 200, "\(stop.body)")
        // Status right after the stop, from many clients at once: each sees the stop.
        let states = LockedValue<[String]>([])
        DispatchQueue.concurrentPerform(iterations: 16) { _ in
            let answer = try? HTTPProbe.get("/api/status", port: port, token: Self.token)
            let processes = answer?.json["processes"] as? [[String: Any]] ?? []
            let state = processes.first { $0["name"] as? String == "ticker" }?["state"] as? String ?? "missing"
            states.withLock { $0.append(state) }
        }
        #expect(states.withLock { $0 }.allSatisfy { $0 == "stopping" || $0 == "stopped" }, "\(states.withLock { $0 })")
        let unready = try waitForReadyz(port, status: 503) { self.reasons($0) == ["ticker: stopped"] }
        #expect(reasons(unready) == ["ticker: stopped"], "\(unready.body)")
        #expect(try HTTPProbe.request("POST", "/api/processes/ticker/start", port: port, token: Self.token).status == 200)
        #expect(try waitForReadyz(port, status: 200).status == 200)
    }
}

/// `GET /readyz` while the store cannot write: a small tmpfs filled up for real (needs root,
/// as in the test container).
@Suite(.ownThreads, .serialized) struct ReadinessOfTheStoreTests {
    static let token = APIAgent.adminToken

    @Test(.enabled(if: TmpfsDisk.canMount, "mounting a tmpfs needs root"))
    func readyzIsUnavailableWhileTheStoreCannotWriteAndReadyOnceItWritesAgain() throws {
        let tmpfs = try TmpfsDisk(size: "8m", name: "readyz-disk-full")
        defer { tmpfs.unmount() }
        let (directory, disk) = (tmpfs.directory, tmpfs.path)
        let run = try AgentRun(settings: """
        {"enabled_modules": ["faults"], "store": {"path": "\(disk)/agent.sqlite"}, "http": {"listen": "127.0.0.1:0", "tokens": ["${env:AGENT_API_TOKEN}"]},
         "processes": {"tick": {"type": "fault", "tick_ms": 5, "event_type": "filler"}}}
        """, arguments: ["--no-build", "--json"], environment: APIAgent.environment, directory: directory)
        defer { _ = run.stop() }
        let line = run.waitForLine(onStderr: true) { $0.contains("http: listening on http://127.0.0.1:") }
        let port = try #require(line?.components(separatedBy: "http://127.0.0.1:").last.flatMap { Int($0.prefix { $0.isNumber }) }, "\(run.transcript)")
        func readyz(_ status: Int, _ check: ([String]) -> Bool) throws -> HTTPProbe.Answer {
            let deadline = Date().addingTimeInterval(30)
            var last = try HTTPProbe.get("/readyz", port: port, token: Self.token)
            while !(last.status == status && check(last.json["reasons"] as? [String] ?? [])), Date() < deadline {
                Thread.sleep(forTimeInterval: 0.1)
                last = try HTTPProbe.get("/readyz", port: port, token: Self.token)
            }
            return last
        }
        #expect(try readyz(200) { $0.isEmpty }.status == 200, "\(run.transcript)")

        #expect(tmpfs.fill() > 0)
        let degraded = try readyz(503) { $0.contains { $0.hasPrefix("store: degraded: ") } }
        #expect(degraded.status == 503, "\(degraded.body)\n\(run.transcript)")
        #expect((degraded.json["reasons"] as? [String])?.first?.hasPrefix("store: degraded: ") == true, "\(degraded.body)")

        try tmpfs.free()
        let writing = try readyz(200) { $0.isEmpty }
        #expect(writing.status == 200, "\(writing.body)\n\(run.transcript)")
    }
}
