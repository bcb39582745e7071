import AgentTestSupport
import Foundation
import Testing

/// The real `agent-control console` run as a systemd `Type=notify` service would be: with
/// `NOTIFY_SOCKET` naming a datagram socket the test listens on.
@Suite(.ownThreads, .serialized) struct SystemdNotifyTests {
    static let twoProcesses = """
    {"enabled_modules": ["sample"], "processes": {
      "trades": {"type": "trade_feed", "interval": 0.05},
      "busy": {"type": "trade_frequency", "window": 5, "threshold": 100}}}
    """

    static func status(_ run: AgentRun) throws -> [String: [String: Any]] {
        let result = try runProgram("agent-control", ["status", "--json", "--settings", run.settingsFile])
        let object = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
        let list = object?["processes"] as? [[String: Any]] ?? []
        return Dictionary(list.map { ($0["name"] as? String ?? "", $0) }, uniquingKeysWith: { a, _ in a })
    }

    static func value(_ key: String, in message: [String]) -> String? {
        message.first { $0.hasPrefix(key + "=") }.map { String($0.dropFirst(key.count + 1)) }
    }

    static func monotonicMicroseconds() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) * 1_000_000 + UInt64(now.tv_nsec) / 1000
    }

    @Test func readyOnceEveryProcessRunsThenReloadingAndStoppingWithWatchdogPings() throws {
        let notify = try NotifySocket()
        defer { notify.stop() }
        let run = try AgentRun(settings: Self.twoProcesses, environment: ["NOTIFY_SOCKET": notify.name, "WATCHDOG_USEC": "200000"])
        defer { _ = run.stop(signal: SIGKILL, timeout: 10) }

        let ready = try #require(notify.waitForMessage { $0.contains("READY=1") }, "no READY=1; got \(notify.messages)\n\(run.transcript)")
        // READY=1 comes once every process has started: both are running when it is seen.
        let status = try Self.status(run)
        #expect(status["trades"]?["state"] as? String == "running" && status["busy"]?["state"] as? String == "running", "\(status)")
        #expect(Self.value("STATUS", in: notify.messages[ready]) == "2/2 processes running", "\(notify.messages[ready])")
        #expect(notify.messages.filter { $0.contains("READY=1") }.count == 1)

        // The workers cannot talk to systemd: the notify socket and the watchdog are not theirs.
        for name in ["trades", "busy"] {
            let pid = try #require(status[name]?["pid"] as? Int)
            let environment = try String(decoding: Data(contentsOf: URL(fileURLWithPath: "/proc/\(pid)/environ")), as: UTF8.self)
                .split(separator: "\0").map(String.init)
            #expect(!environment.contains { $0.hasPrefix("NOTIFY_SOCKET=") || $0.hasPrefix("WATCHDOG_") }, "\(name): \(environment)")
            #expect(environment.contains { $0.hasPrefix("AGENT_SUPERVISOR_PID=") }, "read the worker's environment")
        }

        // A state change: the status says who is not running.
        let stopped = try runProgram("agent-control", ["process", "stop", "trades", "--settings", run.settingsFile])
        #expect(stopped.status == 0, "\(stopped.stderr)")
        #expect(notify.waitForMessage(from: ready + 1) { Self.value("STATUS", in: $0) == "1/2 processes running; stopped: trades" } != nil,
                "\(notify.messages)")
        _ = try runProgram("agent-control", ["process", "start", "trades", "--settings", run.settingsFile])
        let back = try #require(notify.waitForMessage(from: ready + 1) { Self.value("STATUS", in: $0) == "2/2 processes running" }, "\(notify.messages)")

        // SIGHUP (systemctl reload): RELOADING=1 with the monotonic time, then READY=1 again.
        let beforeReload = Self.monotonicMicroseconds()
        kill(run.process.processIdentifier, SIGHUP)
        let reloading = try #require(notify.waitForMessage(from: back + 1) { $0.contains("RELOADING=1") }, "\(notify.messages)")
        let stamp = try #require(Self.value("MONOTONIC_USEC", in: notify.messages[reloading]).flatMap { UInt64($0) }, "\(notify.messages[reloading])")
        #expect(stamp >= beforeReload && stamp <= Self.monotonicMicroseconds())
        let reloaded = try #require(notify.waitForMessage(from: reloading + 1) { $0.contains("READY=1") }, "\(notify.messages)\n\(run.transcript)")

        // The reload command does the same.
        let command = try runProgram("agent-control", ["reload", "--settings", run.settingsFile])
        #expect(command.status == 0, "\(command.stderr)")
        let again = try #require(notify.waitForMessage(from: reloaded + 1) { $0.contains("RELOADING=1") }, "\(notify.messages)")
        #expect(Self.value("MONOTONIC_USEC", in: notify.messages[again]) != nil)
        #expect(notify.waitForMessage(from: again + 1) { $0.contains("READY=1") } != nil, "\(notify.messages)")

        // WATCHDOG=1 comes from the loop at half of WATCHDOG_USEC: several by now, counted loosely.
        #expect(notify.waitForMessage(from: 0) { _ in notify.lines.filter { $0 == "WATCHDOG=1" }.count >= 3 } != nil, "\(notify.messages)")

        #expect(run.stop() == 0, "\(run.transcript)")
        let stopping = try #require(notify.waitForMessage { $0.contains("STOPPING=1") }, "\(notify.messages)")
        #expect(Self.value("STATUS", in: notify.messages[stopping])?.hasPrefix("stopping") == true, "\(notify.messages[stopping])")
        #expect(run.stderrLines.contains { $0.contains("systemd: notifying \(notify.name); watchdog ping every 0.1 s") }, "\(run.transcript)")
    }

    @Test func abstractSocketAndWatchdogForAnotherProcess() throws {
        let notify = try NotifySocket(abstract: true)
        defer { notify.stop() }
        // WATCHDOG_PID names another process (a wrapper's): the agent sends no WATCHDOG=1.
        let run = try AgentRun(settings: Self.twoProcesses,
                               environment: ["NOTIFY_SOCKET": notify.name, "WATCHDOG_USEC": "20000", "WATCHDOG_PID": "1"])
        defer { _ = run.stop(signal: SIGKILL, timeout: 10) }
        let ready = try #require(notify.waitForMessage { $0.contains("READY=1") }, "no READY=1 on \(notify.name)\n\(run.transcript)")
        #expect(Self.value("STATUS", in: notify.messages[ready]) == "2/2 processes running")
        #expect(run.stop() == 0)
        #expect(notify.waitForMessage { $0.contains("STOPPING=1") } != nil, "\(notify.messages)")
        #expect(!notify.lines.contains("WATCHDOG=1"), "\(notify.messages)")
        #expect(run.stderrLines.contains { $0.contains("systemd: notifying \(notify.name)") && !$0.contains("watchdog") }, "\(run.transcript)")
    }

    @Test func unusableNotifySocketIsReportedAndTheAgentRuns() throws {
        let run = try AgentRun(settings: Self.twoProcesses, environment: ["NOTIFY_SOCKET": "relative/notify.sock"])
        defer { _ = run.stop(signal: SIGKILL, timeout: 10) }
        #expect(run.waitForLine(onStderr: true) { $0.contains("NOTIFY_SOCKET=relative/notify.sock: expected an absolute path") } != nil, "\(run.transcript)")
        // The agent runs regardless.
        let deadline = Date().addingTimeInterval(60)
        var status = try Self.status(run)
        while status["trades"]?["state"] as? String != "running", Date() < deadline {
            Thread.sleep(forTimeInterval: 0.05)
            status = try Self.status(run)
        }
        #expect(status["trades"]?["state"] as? String == "running", "\(status)\n\(run.transcript)")
        #expect(run.stop() == 0)
    }
}
