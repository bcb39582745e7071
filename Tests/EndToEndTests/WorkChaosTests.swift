import AgentTestSupport
import Foundation
import GRDB
import Testing

/// Issue 34's chaos test for work: a mix of command tasks that leave daemons behind, module
/// tasks, workflows with a wait and an approval, and a schedule, while the agent is killed with
/// SIGKILL and started again 20 times, its store's disk is full for 10 s, and a slow client
/// holds half-sent requests open from another address. Afterwards every run acknowledged with
/// an id has finished — succeeded, or `abandoned`/`failed` with a reason — no process any run
/// started is alive, the store passes SQLite's integrity check, and the longest turn of the
/// supervisor's loop seen in any life is printed.
@Suite(.ownThreads, .serialized) struct WorkChaosTests {
    static let lives = 20
    /// Deadlines for a loaded 2-core machine.
    static let patience = 240.0

    /// A sleep that only this test's daemons run: found by its command line afterwards.
    static let daemonSeconds = "900.\(Int.random(in: 100_000...999_999))"

    static func settings(disk: String) -> String {
        #"""
        {"enabled_modules": ["faults"], "processes": {},
         "store": {"path": "\#(disk)/agent.sqlite"},
         "http": {"listen": "127.0.0.1:0", "max_connections": 64, "max_connections_per_client": 16,
                  "tokens": [{"token": "${env:OPS_TOKEN}", "name": "ops"}, {"token": "${env:ALICE_TOKEN}", "name": "alice"}]},
         "tasks": {
           "job": {"type": "command", "shell": true, "max_concurrent": 8,
                   "command": "f=daemon.$$; (setsid sh -c \"echo \\$\\$ > $f; exec sleep \#(daemonSeconds)\" &); while [ ! -s $f ]; do sleep 0.05; done; echo \"$AGENT_TASK_IDEMPOTENCY_KEY\" >> done.txt; echo '{\"ok\": true}'"},
           "work": {"type": "faults.fault_task", "max_concurrent": 4},
           "light": {"type": "command", "command": ["/bin/true"]}},
         "workflows": {
           "flow": {"steps": [{"id": "first", "task": "job"},
                              {"id": "go", "wait_event": {"type": "chaos.go", "timeout": 2, "on_timeout": "continue"}},
                              {"id": "ok", "approval": {"approvers": ["ops"], "prompt": "go on?", "timeout": 3, "on_timeout": "continue"}},
                              {"id": "last", "task": "job"}]},
           "signal": {"steps": [{"id": "send", "publish": {"type": "chaos.go", "payload": {}}}]}},
         "schedules": {"tick": {"every": 2, "run": {"task": "light"}}}}
        """#
    }

    @Test(.enabled(if: TmpfsDisk.canMount, "mounting a tmpfs needs root"))
    func killsAFullDiskAndASlowClientLoseNoAcknowledgedRunAndLeaveNoProcess() throws {
        let tmpfs = try TmpfsDisk(size: "16m", name: "work-chaos")
        defer { tmpfs.unmount() }
        let (directory, disk) = (tmpfs.directory, tmpfs.path)
        try Self.settings(disk: disk).write(toFile: directory + "/settings.json", atomically: true, encoding: .utf8)
        let slow = SlowClient()
        defer { slow.stop() }

        var acknowledged: (tasks: [String], workflows: [String]) = ([], [])
        var refused = 0, longestTurn = 0.0, diskFullSince: Date?
        var generator = SystemRandomNumberGenerator()
        for life in 0..<Self.lives {
            let agent = try WorkflowAgent.start(nil, directory: directory)
            slow.aim(at: agent.port)
            // The disk fills in the sixth life and stays full for 10 s.
            if life == 5 {
                #expect(tmpfs.fill() > 0)
                diskFullSince = Date()
            } else if let since = diskFullSince, Date().timeIntervalSince(since) >= 10 {
                try tmpfs.free()
                diskFullSince = nil
            }
            for (path, body) in [("/api/tasks/job/run", "{}"), ("/api/tasks/job/run", "{}"),
                                 ("/api/tasks/work/run", #"{"input": {"mode": "sleep", "ms": 300}}"#), ("/api/workflows/flow/run", "{}")] {
                let sent = Result { try agent.http("POST", path, body: body) }
                guard case .success(let answer) = sent else {
                    Issue.record("life \(life): \(path) got no answer beside the slow client: \(sent)")
                    continue
                }
                guard answer.status == 200, let id = (answer.json["run"] as? [String: Any])?["id"] as? String else {
                    // Refused while the store cannot write: fine, as long as it is said.
                    #expect(answer.status == 503, "\(path): \(answer.status) \(answer.body)")
                    refused += 1
                    continue
                }
                if path.hasPrefix("/api/workflows") { acknowledged.workflows.append(id) } else { acknowledged.tasks.append(id) }
            }
            Thread.sleep(forTimeInterval: Double.random(in: 0.2...1.5, using: &generator))
            if life % 3 == 1 { _ = try? agent.http("POST", "/api/workflows/signal/run", body: "{}") }
            // The liveness probe is answered whatever the slow client holds.
            let live = try? HTTPProbe.request("GET", "/livez", port: agent.port, timeout: 30)
            #expect(live?.status == 200, "life \(life): /livez answered \(live.map { "\($0.status)" } ?? "nothing")")
            if let loop = (try? agent.http("GET", "/api/status"))?.json["loop"] as? [String: Any], let turn = loop["longest_turn"] as? Double {
                longestTurn = max(longestTurn, turn)
            }
            #expect(agent.run.stop(signal: SIGKILL) != nil)
        }
        if diskFullSince != nil { try tmpfs.free() }

        // The last life: everything acknowledged finishes.
        let agent = try WorkflowAgent.start(nil, directory: directory)
        slow.aim(at: agent.port)
        let ended: Set<String> = ["succeeded", "failed", "abandoned", "cancelled", "timed_out"]
        var runs: [String: [String: Any]] = [:], flows: [String: [String: Any]] = [:]
        let finished = WorkflowAgent.wait(timeout: Self.patience) {
            approveWaiting(agent)
            runs = Self.byID(try? agent.http("GET", "/api/runs?limit=10000"), key: "runs")
            flows = Self.byID(try? agent.http("GET", "/api/workflow-runs?limit=10000"), key: "runs")
            return acknowledged.tasks.allSatisfy { ended.contains(runs[$0]?["status"] as? String ?? "") }
                && acknowledged.workflows.allSatisfy { ended.contains(flows[$0]?["status"] as? String ?? "") }
        }
        #expect(finished, "runs still going: \(acknowledged.tasks.filter { !ended.contains(runs[$0]?["status"] as? String ?? "") })")
        if let loop = (try? agent.http("GET", "/api/status"))?.json["loop"] as? [String: Any], let turn = loop["longest_turn"] as? Double {
            longestTurn = max(longestTurn, turn)
        }
        #expect(agent.run.stop() == 0, "\(agent.run.transcript)")
        slow.stop()

        // Nothing acknowledged is lost; what did not succeed says why.
        for id in acknowledged.tasks + acknowledged.workflows {
            let run = try #require(runs[id] ?? flows[id], "run \(id) was acknowledged and then lost")
            let status = run["status"] as? String ?? "?"
            if status != "succeeded" {
                #expect(["abandoned", "failed"].contains(status) && !(run["error"] as? String ?? "").isEmpty, "\(id): \(run)")
            }
        }
        // A succeeded command run did its work (its key is in done.txt).
        let done = Set(WorkflowAgent.lines(directory + "/done.txt"))
        for id in acknowledged.tasks where runs[id]?["task"] as? String == "job" && runs[id]?["status"] as? String == "succeeded" {
            #expect(done.contains { $0.hasPrefix(id + "/") || $0 == id || $0.contains(id) }, "\(id) succeeded without its effect")
        }
        // No process of any run is alive: neither a daemon that wrote its pid (each succeeded
        // command run waited for its daemon's pid before ending) nor any other such sleep.
        let started = Self.daemonPids(in: directory)
        let succeededJobs = acknowledged.tasks.filter { runs[$0]?["task"] as? String == "job" && runs[$0]?["status"] as? String == "succeeded" }
        #expect(succeededJobs.isEmpty || !started.isEmpty, "succeeded command runs but no daemon pid written: the check below would prove nothing")
        // Killed with their runs' cgroups as the agent stopped; on a loaded machine a killed
        // process may take a moment to be gone, one that escaped stays (its sleep is long).
        var survivors = started.filter(AgentRun.isAlive) + Self.daemons()
        let gone = Date().addingTimeInterval(30)
        while !survivors.isEmpty, Date() < gone {
            Thread.sleep(forTimeInterval: 0.1)
            survivors = started.filter(AgentRun.isAlive) + Self.daemons()
        }
        #expect(survivors.isEmpty, "processes of runs still alive: \(survivors)")
        // The store is sound.
        let check = try DatabaseQueue(path: disk + "/agent.sqlite").read { try String.fetchAll($0, sql: "PRAGMA integrity_check") }
        #expect(check == ["ok"], "\(check)")
        let succeeded = (acknowledged.tasks + acknowledged.workflows).filter { (runs[$0] ?? flows[$0])?["status"] as? String == "succeeded" }.count
        print("work chaos test: \(Self.lives) kills, disk full 10 s, \(acknowledged.tasks.count) task and \(acknowledged.workflows.count) workflow runs acknowledged (\(succeeded) succeeded), \(refused) refused (503), \(Self.daemonPids(in: directory).count) daemons started, slow client's connections \(slow.opened), longest loop turn \(String(format: "%.1f", longestTurn * 1000)) ms")
    }

    static func byID(_ answer: HTTPProbe.Answer?, key: String) -> [String: [String: Any]] {
        let list = answer?.json[key] as? [[String: Any]] ?? []
        return Dictionary(list.map { ($0["id"] as? String ?? "?", $0) }, uniquingKeysWith: { first, _ in first })
    }

    /// The pids the command runs' daemons wrote (`daemon.<shell pid>` in the agent's folder).
    static func daemonPids(in directory: String) -> [Int32] {
        let files = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        return files.filter { $0.hasPrefix("daemon.") }.compactMap {
            (try? String(contentsOfFile: directory + "/" + $0, encoding: .utf8)).flatMap { Int32($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
        }
    }

    /// Live processes (zombies are dead) running this test's daemon sleep.
    static func daemons() -> [Int32] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.compactMap(Int32.init).filter { pid in
            guard let command = try? String(contentsOfFile: "/proc/\(pid)/cmdline", encoding: .utf8) else { return false }
            return command.contains(daemonSeconds) && AgentRun.isAlive(pid)
        }
    }

    /// Approves every approval waiting (as ops, an approver).
    private func approveWaiting(_ agent: WorkflowAgent) {
        guard let answer = try? agent.http("GET", "/api/workflow-runs?status=waiting&limit=10000") else { return }
        for run in answer.json["runs"] as? [[String: Any]] ?? [] {
            guard let id = run["id"] as? String else { continue }
            _ = try? agent.http("POST", "/api/workflow-runs/\(id)/steps/ok/approve", body: #"{"comment": "chaos"}"#)
        }
    }
}

/// A slowloris client: from 127.0.0.2, keeps up to `count` connections open to the agent's
/// HTTP port, each with half a request sent; one the server closes is opened again.
final class SlowClient: @unchecked Sendable {
    private let lock = NSLock()
    private var port = 0
    private var running = true
    private(set) var opened = 0
    private var thread: Thread?

    init(count: Int = 100) {
        let thread = Thread { [unowned self] in self.hold(count) }
        self.thread = thread
        thread.start()
    }

    func aim(at port: Int) { lock.withLock { self.port = port } }

    func stop() { lock.withLock { running = false } }

    private func hold(_ count: Int) {
        var sockets: [Int32] = []
        var target = 0
        while lock.withLock({ running }) {
            let port = lock.withLock { self.port }
            if port != target {
                sockets.forEach { close($0) }
                sockets = []
                target = port
            }
            // Drop the connections the server closed.
            sockets = sockets.filter { fd in
                var byte: UInt8 = 0
                let n = recv(fd, &byte, 1, Int32(MSG_DONTWAIT | MSG_PEEK))
                if n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) || n > 0 { close(fd); return false }
                return true
            }
            while target != 0, sockets.count < count, let fd = Self.halfRequest(port: target) {
                sockets.append(fd)
                lock.withLock { opened += 1 }
            }
            Thread.sleep(forTimeInterval: 0.2)
        }
        sockets.forEach { close($0) }
    }

    /// A connection from 127.0.0.2 with the first half of a request's head sent.
    private static func halfRequest(port: Int) -> Int32? {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return nil }
        var local = sockaddr_in()
        local.sin_family = sa_family_t(AF_INET)
        local.sin_addr.s_addr = inet_addr("127.0.0.2")
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let size = socklen_t(MemoryLayout<sockaddr_in>.size)
        let ok = withUnsafePointer(to: &local) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, size) } } == 0
            && withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, size) } } == 0
        let head = Array("GET /api/status HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ".utf8)
        guard ok, head.withUnsafeBytes({ send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }) == head.count else {
            close(fd)
            return nil
        }
        return fd
    }
}
