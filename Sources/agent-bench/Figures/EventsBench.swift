import AgentBase
import AgentCore
import AgentRuntime
import AgentWork
import Foundation
import GRDB
import JSONSchema

/// Figure 16: events in (issue 36) — an event published over HTTP to the `wait_event` step it
/// releases, with the store on, against the same through the control socket and an HTTP
/// request's floor (GET /livez); and the cost of one event with 10,000 runs waiting on its
/// type, each for its own correlation value — found through the wait index — against the same
/// runs waiting on a condition the index cannot key (every run's condition checked).
enum EventsBench {
    enum Target {
        static let released50 = 2.0
        static let eventCost = 1.0
    }

    static let waiting = 10_000

    static func run(_ environment: BenchEnvironment, logFD: Int32) -> Section {
        let samples = environment.quick ? 50 : 200
        var section = Section(
            number: 16, title: "Events in: POST /api/events → the released wait_event step; one event among \(waiting) waiting runs",
            method: "Latency: agent-control console (the real binary, the store on, the HTTP front on loopback with the bench's read token granted \"publish\"); one run at a time of [wait_event order.confirmed where {\"properties\": {\"n\": {\"const\": \"${input:/n}\"}}}, set] with its own n, started over the control socket and waiting (its wait step's start committed); then the event {\"n\": n} published, alternately by POST /api/events (a new connection each, as a webhook would) and by the control socket's event_publish; the released step's ended_at from the store (CLOCK_REALTIME, set when the event reached it: after the event was committed and routed) − the time the bench sent the request. \(samples) of each after 10 of warm-up. Floor: GET /livez, a new connection each. Index: an agent in the bench's process (the store off: no disk in the figure), \(waiting) runs of the same workflow waiting, n = 0…\(waiting - 1); the time the engine takes for one event (WorkflowEngine.eventArrived on the loop, which finds the run and ends its step) for \(samples) events of random n; the same with \(waiting) runs waiting on {\"properties\": {\"n\": {\"enum\": [\"${input:/n}\"]}}} — the same condition, but no const member to key on, so every run's condition is checked.")
        let load = MachineLoad.sample()
        section.note(String(format: "machine busy just before this figure: %.0f %% of all cores (1 s sample of /proc/stat)", load.busyPercent)
                     + (load.strays.isEmpty ? "" : "; running, not started by the bench: " + load.strays.joined(separator: ", ")))
        do {
            try measureLatency(environment, samples: samples, warmup: 10, into: &section)
            try measureIndex(environment, logFD: logFD, samples: samples, into: &section)
        } catch let error as AgentTaskBench.NotAvailable {
            section.note("events in not available in this build (no figure): \(error.description)")
        } catch {
            section.fail("events in: \(error)")
        }
        return section
    }

    static func workflows(indexed: Bool) -> String {
        let condition = indexed ? #"{"const": "${input:/n}"}"# : #"{"enum": ["${input:/n}"]}"#
        return #"""
            "one": {"input": {"type": "object", "required": ["n"], "properties": {"n": {"type": "integer"}}},
                    "steps": [{"id": "w", "wait_event": {"type": "order.confirmed", "where": {"properties": {"n": \#(condition)}}}},
                              {"id": "next", "set": {"vars": {"x": 1}}}]}
            """#
    }

    // MARK: Latency

    static func measureLatency(_ environment: BenchEnvironment, samples: Int, warmup: Int, into section: inout Section) throws {
        let settings = #"""
            {"enabled_modules": [], "processes": {},
             "http": {"listen": "127.0.0.1:0", "tokens": [{"token": "${env:\#(HTTPBench.tokenVariable)}", "role": "read", "name": "agent-bench", "grants": ["publish"]}]},
             "workflows": {\#(workflows(indexed: true))}}
            """#
        let (run, agentDirectory) = try AgentTaskBench.startAgent(environment, name: "events-in", settings: settings, refusalMentioning: "/events")
        defer { AgentTaskBench.stopAgent(run) }
        guard run.wait(timeout: 60, until: { HTTPBench.listeningPort(run) != nil }), let port = HTTPBench.listeningPort(run) else {
            throw BenchError("no http: listening line from the agent")
        }
        let paths = AgentPaths(agentDirectory: agentDirectory)
        var sent: [String: (time: Double, overHTTP: Bool)] = [:]
        var answered = Samples()
        for n in 0..<(2 * (warmup + samples)) {
            let id = try startWaiting(n, paths: paths)
            let overHTTP = n % 2 == 0
            let body = #"{"type": "order.confirmed", "payload": {"n": \#(n)}}"#
            let time = Double(Clock.realtimeNanoseconds()) / 1e9
            if overHTTP {
                var headers = HTTPBench.authorizationHeaders
                headers["Content-Type"] = "application/json"
                let answer = try HTTPProbe.request(port: port, method: "POST", path: "/api/events", headers: headers, body: body)
                guard answer.status == 200 else { throw BenchError("POST /api/events answered \(answer.status): \(answer.body.prefix(300))") }
            } else {
                let answer = try ControlClient.send(["command": "event_publish", "type": "order.confirmed", "payload": ["n": .number(JSONNumber(n))]], paths: paths, timeout: 60)
                guard answer["ok"]?.boolValue == true else { throw BenchError("event_publish answered \(answer.serialized().prefix(300))") }
            }
            let end = Double(Clock.realtimeNanoseconds()) / 1e9
            if n >= 2 * warmup {
                sent[id] = (time, overHTTP)
                if overHTTP { answered.append((end - time) * 1000) }
            }
            run.pump(maxWait: 0)
        }
        let released = try releaseTimes(AgentTaskBench.storePath(agentDirectory), runs: Array(sent.keys))
        var http = Samples(), control = Samples()
        for (id, request) in sent {
            guard let ended = released[id] else { throw BenchError("run \(id) has no ended wait step in the store") }
            if request.overHTTP { http.append((ended - request.time) * 1000) } else { control.append((ended - request.time) * 1000) }
        }
        var floor = Samples()
        for _ in 0..<samples {
            let time = Clock.now()
            let answer = try HTTPProbe.request(port: port, path: "/livez")
            guard answer.status == 200 else { throw BenchError("GET /livez answered \(answer.status)") }
            floor.append((Clock.now() - time) * 1000)
        }
        section.add(Figure("POST /api/events → wait_event step released (store on)", .milliseconds, samples: http,
                           note: String(format: "target p50 < %.0f ms: %@", Target.released50, http.median < Target.released50 ? "met" : "NOT met")))
        section.add(Figure("  POST /api/events answered (committed and routed)", .milliseconds, samples: answered))
        section.add(Figure("  control socket event_publish → step released", .milliseconds, samples: control))
        section.add(Figure("  GET /livez round trip (an HTTP request's floor)", .milliseconds, samples: floor))
        section.compare("POST /api/events → wait_event step released (store on)", with: "  control socket event_publish → step released", "  GET /livez round trip (an HTTP request's floor)")
    }

    /// Starts a run for `n` and returns its id once its wait step is committed as waiting.
    static func startWaiting(_ n: Int, paths: AgentPaths) throws -> String {
        let started = try ControlClient.send(["command": "workflow_run", "name": "one", "input": ["n": .number(JSONNumber(n))]], paths: paths, timeout: 60)
        guard let id = started["run"]?["id"]?.stringValue else { throw BenchError("workflow_run one answered \(started.serialized().prefix(300))") }
        for _ in 0..<5_000 {
            let shown = try ControlClient.send(["command": "workflow_show", "id": .string(id)], paths: paths, timeout: 60)
            if shown["run"]?["status"] == "waiting" { return id }
            usleep(200)
        }
        throw BenchError("run \(id) of one never waited")
    }

    /// Each run's wait step's ended_at, once the store has them all.
    static func releaseTimes(_ path: String, runs: [String]) throws -> [String: Double] {
        let store = try StoreFile(path: path)
        let deadline = Clock.now() + 30
        var found: [String: Double] = [:]
        repeat {
            found = try store.database.read { db in
                var times: [String: Double] = [:]
                for row in try Row.fetchAll(db, sql: "SELECT run_id, data FROM workflow_steps WHERE step = 'w'") {
                    let run: String = row["run_id"], data: String = row["data"]
                    if let ended = (try? JSONValue.parse(data))?["ended_at"]?.numberValue?.doubleValue { times[run] = ended }
                }
                return times
            }
            if runs.allSatisfy({ found[$0] != nil }) { break }
            usleep(10_000)
        } while Clock.now() < deadline
        return found
    }

    // MARK: Index against a scan

    static func measureIndex(_ environment: BenchEnvironment, logFD: Int32, samples: Int, into section: inout Section) throws {
        let indexed = try eventCost(environment, logFD: logFD, indexed: true, samples: samples)
        let scanned = try eventCost(environment, logFD: logFD, indexed: false, samples: environment.quick ? 20 : 50)
        let label = "one event, \(waiting) runs waiting on its type (index)"
        section.add(Figure(label, .microseconds, samples: indexed,
                           note: String(format: "target p50 < %.0f ms: %@; %.0f× less than the scan", Target.eventCost, indexed.median / 1000 < Target.eventCost ? "met" : "NOT met",
                                        scanned.median / max(indexed.median, 0.001))))
        section.add(Figure("  the same, every waiting run's condition checked (scan)", .microseconds, samples: scanned))
        section.compare(label, with: "  the same, every waiting run's condition checked (scan)")
    }

    /// The engine's time for one event (µs), with ``waiting`` runs waiting.
    static func eventCost(_ environment: BenchEnvironment, logFD: Int32, indexed: Bool, samples: Int) throws -> Samples {
        let settings = #"{"enabled_modules": [], "processes": {}, "store": {"enabled": false}, "workflows": {\#(workflows(indexed: indexed))}}"#
        let agent = try EmbeddedAgent(environment: environment, name: indexed ? "events-index" : "events-scan", settings: settings, logFD: logFD, work: true)
        let supervisor = agent.supervisor
        guard let engine = supervisor.inbox.isolated({ supervisor.work.workflows }),
              let definition = supervisor.inbox.isolated({ engine.definitions["one"] }) else {
            throw BenchError("the embedded agent has no workflow engine")
        }
        supervisor.inbox.isolated {
            for n in 0..<waiting { engine.start(definition, input: ["n": .number(JSONNumber(n))], requestedBy: "bench") }
        }
        guard agent.run(timeout: 300, until: { supervisor.inbox.isolated { engine.waits.count == waiting } }) else {
            throw BenchError("\(supervisor.inbox.isolated { engine.waits.count }) of \(waiting) runs waiting after 300 s")
        }
        var costs = Samples()
        var left = Array(0..<waiting).shuffled()
        for _ in 0..<samples {
            let n = left.removeLast()
            let time = Double(Clock.realtimeNanoseconds()) / 1e9
            let spent = supervisor.inbox.isolated { () -> Double in
                let start = Clock.now()
                engine.eventArrived(type: "order.confirmed", source: "bench", time: time, payload: ["n": .number(JSONNumber(n))])
                return Clock.now() - start
            }
            costs.append(spent * 1e6)
            // Its step's end committed (in memory) before the next event.
            agent.run(timeout: 10) { supervisor.inbox.isolated { engine.live.count == waiting - costs.count } }
        }
        guard supervisor.inbox.isolated({ engine.waits.count }) == waiting - samples else {
            throw BenchError("\(samples) events released \(waiting - supervisor.inbox.isolated { engine.waits.count }) runs, expected one each")
        }
        _ = agent.stopAll()
        return costs
    }
}
