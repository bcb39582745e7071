import AgentCore
import Foundation
import JSONSchema

/// Figure 9: `GET /api/status` of an agent with 20 processes under wrk, against supervisord's
/// XML-RPC `supervisor.getAllProcessInfo` for 20 programs, both over keep-alive connections
/// and with a new connection per call, in the same run.
enum HTTPBench {
    static let processes = 20
    /// The issue's reference: supervisord 4.3's better figure (a new connection per call) × 10.
    static let referenceTarget = 16_500.0
    static let p99Target = 2.0
    /// The keep-alive load points besides the headline 32 connections: the same server at
    /// lighter loads, so that the curve of throughput against latency is seen, not one point.
    static let sweepConnections = [1, 4, 8, 16]

    static func run(_ environment: BenchEnvironment) -> Section {
        let load = Wrk.Load(seconds: environment.quick ? 3 : 10)
        var section = Section(
            number: 9, title: "HTTP: GET /api/status against supervisord's getAllProcessInfo (\(processes) processes)",
            method: "agent-control console (the real binary, --quiet, \(processes) bench_idle processes, the store on, \"http\": {\"listen\": \"127.0.0.1:0\", \"tokens\": [a read-only token the bench makes for the run]}; every request carries it as Authorization: Bearer) and, after it, supervisord (\(Supervisord.requirement) from PyPI, installed at run time into a virtual environment in the scratch folder) with \(processes) programs `/bin/sleep infinity` and its inet_http_server on 127.0.0.1. Each is checked first with one request (200; \(processes) processes in the answer), then loaded by Debian's wrk (installed with apt-get if missing): \(load.summary) (2 threads, 32 connections, sharing the 2 cores with the server), then the same at \(sweepConnections.map(String.init).joined(separator: ", ")) connections (\(load.seconds / 2) s each; 1 thread for 1 connection), with a Lua script (written into the scratch folder) that makes the request (GET /api/status; POST /RPC2 with the XML-RPC body of supervisorctl status) and counts the answers that say `Connection: close` (none may: the 32 connections stay open). requests/s = wrk's Requests/sec; latency from wrk's --latency distribution (p50 in the median column, p99, max; from the first byte written to the last byte read). new connection per call: not wrk, which keeps a connection unless the answer says `Connection: close` (supervisord closes without saying so: wrk then counts a read error and sends again), but the bench's own client, 32 threads for 32 concurrent calls, each in a loop of connect, the request with `Connection: close`, read until the server closes (latency from connect to close), for the same time. CPU per request: agent-control's CPU time (all threads, /proc schedstat) over the run / requests.")
        let wrk: Wrk
        do {
            wrk = try Wrk.locate()
        } catch {
            section.fail("\(error)")
            return section
        }
        section.note("\(wrk.version) at \(wrk.path)")
        let scripts: Scripts
        do {
            scripts = try Scripts(environment: environment)
        } catch {
            section.fail("cannot write the wrk scripts: \(error)")
            return section
        }

        var agent: AgentOutcome?
        do {
            agent = try measureAgent(environment, wrk: wrk, load: load, scripts: scripts, into: &section)
        } catch {
            section.fail("agent: \(error)")
        }
        var baseline: (keepAlive: WrkOutput, perCall: PerCallClient.Outcome)?
        do {
            baseline = try measureSupervisord(environment, wrk: wrk, load: load, scripts: scripts, into: &section)
        } catch {
            section.fail("supervisord: \(error)")
        }
        section.compare("GET /api/status, keep-alive", with: "supervisord getAllProcessInfo, keep-alive")
        section.compare("GET /api/status, new connection per call", with: "supervisord getAllProcessInfo, new connection")
        guard let agent else { return section }
        // The agent's keep-alive figure against supervisord's better one, as the issue states it.
        if let baseline {
            let better = max(baseline.keepAlive.requestsPerSecond, baseline.perCall.requestsPerSecond)
            let target = 10 * better
            let rate = agent.keepAlive.requestsPerSecond
            section.add(Figure("ratio agent keep-alive / supervisord's better", .ratio, median: rate / better, count: 1, note: "target ≥ 10"))
            let required = max(target, referenceTarget)
            let points = [(32, agent.keepAlive)] + agent.sweep
            let verdicts = points.map { connections, output in
                let p99 = (output.latencyP99 ?? .infinity) / 1000
                let met = output.requestsPerSecond >= required && p99 < p99Target
                return String(format: "%d connection%@ %@ (%@ /s, p99 %.2f ms)", connections, connections == 1 ? "" : "s", met ? "met" : "not met",
                              TableRenderer.grouped(Int(output.requestsPerSecond.rounded())), p99)
            }
            section.note(String(format: "target: keep-alive ≥ 10 × supervisord's better figure of this run (%@ /s) and ≥ the issue's reference %@ /s, with p99 < %.0f ms, both at one load: ",
                                TableRenderer.grouped(Int(target.rounded())), TableRenderer.grouped(Int(referenceTarget)), p99Target)
                         + verdicts.joined(separator: "; ") + ".")
        }
        return section
    }

    /// The Lua scripts wrk runs, one per request.
    struct Scripts {
        var status: String
        var rpc: String

        init(environment: BenchEnvironment) throws {
            let folder = environment.folder("wrk")
            func write(_ name: String, _ text: String) throws -> String {
                let path = "\(folder)/\(name).lua"
                try text.write(toFile: path, atomically: true, encoding: .utf8)
                return path
            }
            let status = ["wrk.method = \"GET\"", "wrk.path = \"/api/status\""] + HTTPBench.authorizationLines
            let rpc = ["wrk.method = \"POST\"", "wrk.path = \"/RPC2\"", "wrk.headers[\"Content-Type\"] = \"text/xml\"",
                       "wrk.body = [[\(Supervisord.getAllProcessInfo)]]"]
            self.status = try write("status", Self.script(status))
            self.rpc = try write("rpc", Self.script(rpc))
        }

        /// The request, then a count of the answers that close the connection (printed by
        /// `done` as `closed: N` and `answers: N`, which ``WrkOutput`` reads).
        static func script(_ request: [String]) -> String {
            (request + [
                "local threads = {}",
                "function setup(thread) table.insert(threads, thread) end",
                "function init(args) closed = 0; answers = 0 end",
                "function response(status, headers, body)",
                "  answers = answers + 1",
                "  for name, value in pairs(headers) do",
                "    if string.lower(name) == \"connection\" and string.lower(value) == \"close\" then closed = closed + 1 end",
                "  end",
                "end",
                "function done(summary, latency, requests)",
                "  local c, a = 0, 0",
                "  for _, thread in ipairs(threads) do c = c + thread:get(\"closed\"); a = a + thread:get(\"answers\") end",
                "  io.write(string.format(\"closed: %d\\nanswers: %d\\n\", c, a))",
                "end",
            ]).joined(separator: "\n") + "\n"
        }
    }

    /// The bench's bearer token for this run: 32 hex digits from the system's random source.
    static let token = (0..<16).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined()

    /// The variable the settings take the token from (a token written in the file is refused);
    /// set in the bench's environment, which agent-control and the embedded agent inherit.
    static let tokenVariable = "AGENT_BENCH_TOKEN"

    /// Puts the token into the bench's environment.
    static func exportToken() { setenv(tokenVariable, token, 1) }

    /// The `"http"` key of the agent's settings for the bench: loopback, any free port, the
    /// bench's token with the read role (as a monitoring program would have).
    static var httpSettings: String {
        #""http": {"listen": "127.0.0.1:0", "tokens": [{"token": "${env:\#(tokenVariable)}", "role": "read", "name": "agent-bench"}]}"#
    }

    static var authorizationHeaders: [String: String] { ["Authorization": "Bearer \(token)"] }

    /// Lines of the status script that authenticate it.
    static var authorizationLines: [String] { authorizationHeaders.map { "wrk.headers[\"\($0.key)\"] = \"\($0.value)\"" } }

    /// The port of an agent whose log said `http: listening on http://127.0.0.1:PORT`.
    static func listeningPort(_ run: ConsoleRun) -> Int? {
        for line in run.lines {
            guard let range = line.text.range(of: "http: listening on http://") else { continue }
            let address = line.text[range.upperBound...].split(separator: " ").first ?? ""
            return address.split(separator: ":").last.flatMap { Int($0) }
        }
        return nil
    }

    /// The agent's side of the figure: the headline keep-alive load, the lighter keep-alive
    /// loads by connection count, and a new connection per call.
    struct AgentOutcome {
        var keepAlive: WrkOutput
        var sweep: [(connections: Int, output: WrkOutput)]
        var perCall: PerCallClient.Outcome
    }

    static func measureAgent(_ environment: BenchEnvironment, wrk: Wrk, load: Wrk.Load, scripts: Scripts,
                             into section: inout Section) throws -> AgentOutcome {
        let file = try environment.writeAgent("http-status", settings: GeneratedSettings.idle(count: processes, http: httpSettings))
        let run = try ConsoleRun(environment: environment, settingsFile: file)
        defer {
            let (stopped, left) = run.stop(signal: SIGTERM, timeout: 20)
            if stopped == nil || !left.isEmpty { section.fail("agent: stop incomplete, \(left.count) worker(s) left") }
        }
        guard run.wait(timeout: 60, until: { run.readyTimes.count >= processes && listeningPort(run) != nil }) else {
            throw BenchError("\(run.readyTimes.count) of \(processes) workers ready after 60 s, \(listeningPort(run).map { "listening on \($0)" } ?? "no http: listening line"); \(run.errors.prefix(3).joined(separator: " | "))")
        }
        let port = listeningPort(run)!
        let answer = try HTTPProbe.request(port: port, path: "/api/status", headers: authorizationHeaders)
        let listed = (try? JSONValue.parse(answer.body))?["processes"]?.arrayValue?.count ?? 0
        guard answer.status == 200, listed == processes else {
            throw BenchError("GET /api/status answered \(answer.status) with \(listed) processes (expected 200 with \(processes)): \(answer.body.prefix(300))")
        }
        IdleBench.settle(run, seconds: 1)
        let url = "http://127.0.0.1:\(port)/api/status"
        var cpuBefore = ProcFiles.cpuNanoseconds(of: run.pid)
        let keepAlive = try wrk.run(url, load: load, script: scripts.status)
        let keepAliveCPU = ProcFiles.cpuNanoseconds(of: run.pid) - cpuBefore
        run.pump(maxWait: 0)
        var sweep: [(connections: Int, output: WrkOutput)] = []
        for connections in sweepConnections {
            let lighter = Wrk.Load(threads: min(load.threads, connections), connections: connections, seconds: max(1, load.seconds / 2))
            sweep.append((connections, try wrk.run(url, load: lighter, script: scripts.status)))
            run.pump(maxWait: 0)
        }
        // The tail beside other work: one process spinning on a core (`yes > /dev/null`).
        let hogged = try CPUHog.beside { try wrk.run(url, load: Wrk.Load(threads: 2, connections: 16, seconds: max(1, load.seconds / 2)), script: scripts.status) }
        run.pump(maxWait: 0)
        cpuBefore = ProcFiles.cpuNanoseconds(of: run.pid)
        let perCall = PerCallClient.run(port: port, method: "GET", path: "/api/status", headers: authorizationHeaders,
                                        connections: load.connections, seconds: Double(load.seconds))
        let perCallCPU = ProcFiles.cpuNanoseconds(of: run.pid) - cpuBefore
        run.pump(maxWait: 0)
        check(keepAlive, who: "agent, keep-alive", into: &section)
        check(perCall, who: "agent, new connection per call", into: &section)
        let target = String(format: "target ≥ 10 × supervisord's better and ≥ %@ /s (the issue's reference)", TableRenderer.grouped(Int(referenceTarget)))
        add(keepAlive, "GET /api/status, keep-alive", note: target, into: &section)
        section.add(cpuFigure(keepAliveCPU, requests: keepAlive.requests))
        for (connections, output) in sweep {
            check(output, who: "agent, keep-alive, \(connections) connections", into: &section)
            add(output, "GET /api/status, keep-alive, \(connections) connection\(connections == 1 ? "" : "s")", note: nil, into: &section)
        }
        check(hogged, who: "agent, keep-alive, 16 connections beside a CPU hog", into: &section)
        add(hogged, "GET /api/status, keep-alive, 16 connections, beside a CPU hog", note: "one `yes > /dev/null` spinning on a core", into: &section)
        add(perCall, "GET /api/status, new connection per call", note: nil, into: &section)
        section.add(cpuFigure(perCallCPU, requests: perCall.requests))
        return AgentOutcome(keepAlive: keepAlive, sweep: sweep, perCall: perCall)
    }

    static func cpuFigure(_ nanoseconds: Int64, requests: Int) -> Figure {
        Figure("  CPU per request: agent-control", .microseconds, median: Double(nanoseconds) / 1000 / Double(max(1, requests)), count: 1,
               note: "all its threads over the run")
    }

    static func measureSupervisord(_ environment: BenchEnvironment, wrk: Wrk, load: Wrk.Load, scripts: Scripts,
                                   into section: inout Section) throws -> (keepAlive: WrkOutput, perCall: PerCallClient.Outcome) {
        let supervisord = try Supervisord(environment: environment, programs: processes)
        defer { supervisord.stop() }
        section.note("baseline: \(supervisord.version) (\(Supervisord.requirement))")
        let url = "http://127.0.0.1:\(supervisord.port)/RPC2"
        let keepAlive = try wrk.run(url, load: load, script: scripts.rpc)
        let perCall = PerCallClient.run(port: supervisord.port, method: "POST", path: "/RPC2", headers: ["Content-Type": "text/xml"],
                                        body: Supervisord.getAllProcessInfo, connections: load.connections, seconds: Double(load.seconds))
        check(keepAlive, who: "supervisord, keep-alive", into: &section)
        check(perCall, who: "supervisord, new connection per call", into: &section)
        add(keepAlive, "supervisord getAllProcessInfo, keep-alive", note: "the issue's reference: 227 /s", into: &section)
        add(perCall, "supervisord getAllProcessInfo, new connection", note: "the issue's reference: 1,651 /s", into: &section)
        return (keepAlive, perCall)
    }

    /// Two rows: requests/s, then the latency distribution.
    static func add(_ output: PerCallClient.Outcome, _ label: String, note: String?, into section: inout Section) {
        section.add(Figure(label, .perSecond, median: output.requestsPerSecond, count: 1,
                           note: [TableRenderer.grouped(output.requests) + String(format: " calls in %.1f s, each on a new connection", output.seconds), note]
                               .compactMap { $0 }.joined(separator: "; ")))
        section.add(Figure("  latency (p50, p99, max)", .milliseconds, median: output.latencies.median / 1000, p99: output.latencies.p99 / 1000,
                           max: output.latencies.max / 1000, count: output.requests, note: "from connect to the server's close"))
    }

    /// Two rows: requests/s, then the latency distribution.
    static func add(_ output: WrkOutput, _ label: String, note: String?, into section: inout Section) {
        section.add(Figure(label, .perSecond, median: output.requestsPerSecond, count: 1,
                           note: [TableRenderer.grouped(output.requests) + String(format: " requests in %.1f s", output.seconds), note]
                               .compactMap { $0 }.joined(separator: "; ")))
        section.add(Figure("  latency (p50, p99, max)", .milliseconds, median: (output.latencyP50 ?? .nan) / 1000,
                           p99: (output.latencyP99 ?? .nan) / 1000, max: output.latencyMax / 1000, count: output.requests,
                           note: "target p99 < 2 ms".onlyIf(label.hasPrefix("GET"))))
    }

    /// A run counts only if every call was answered with a 2xx.
    static func check(_ output: PerCallClient.Outcome, who: String, into section: inout Section) {
        if output.non2xx > 0 { section.fail("\(who): \(TableRenderer.grouped(output.non2xx)) answers were not 2xx") }
        if output.errors > 0 { section.fail("\(who): \(TableRenderer.grouped(output.errors)) calls failed; the first: \(output.firstError ?? "?")") }
        if output.requests == 0 { section.fail("\(who): no call completed") }
    }

    /// A run counts only if every answer was a 2xx without socket errors and every connection
    /// was kept open.
    static func check(_ output: WrkOutput, who: String, into section: inout Section) {
        if output.non2xx > 0 { section.fail("\(who): \(TableRenderer.grouped(output.non2xx)) answers were not 2xx or 3xx") }
        let errors = output.socketErrors
        if errors.total > 0 {
            section.fail("\(who): socket errors: connect \(errors.connect), read \(errors.read), write \(errors.write), timeout \(errors.timeout)")
        }
        guard let answers = output.scriptCounts["answers"], let closed = output.scriptCounts["closed"] else {
            section.fail("\(who): the wrk script printed no counts")
            return
        }
        if closed > 0 { section.fail("\(who): \(TableRenderer.grouped(closed)) of \(TableRenderer.grouped(answers)) answers closed the connection") }
    }
}

extension String {
    /// The string when `condition` holds, else nil.
    func onlyIf(_ condition: Bool) -> String? { condition ? self : nil }
}
