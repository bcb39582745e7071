import AgentBase
import AgentLoop
import AgentSupervision
import Foundation
import JSONSchema

/// Whether the agent is doing what its settings ask (`readiness`, `GET /readyz`): the store
/// (when on) is writable and every enabled process is running, or restarting as its policy
/// says without flapping. One crash is not unreadiness: a process is flapping once its
/// workers ended unasked `failures` times within `window` seconds, and stays so until the
/// oldest of those leaves the window.
public struct Readiness: Sendable, Equatable {
    /// Worker ends within ``window`` that make a process flapping.
    public var failures: Int
    /// Seconds.
    public var window: Double

    public static let defaultFailures = 3
    public static let defaultWindow = 60.0

    public init(failures: Int = Readiness.defaultFailures, window: Double = Readiness.defaultWindow) {
        self.failures = failures
        self.window = window
    }

    /// The rules a `readiness` request gives (`failures`, `window`), the defaults otherwise.
    /// Every front has checked the request against the command's schema (``ReadinessCommand``).
    public init(_ request: JSONValue) {
        self.init((try? JSONValueDecoder().decode(ReadinessCommand.Request.self, from: request)) ?? ReadinessCommand.Request())
    }

    /// The rules of a decoded `readiness` request, the defaults for those it leaves out.
    package init(_ request: ReadinessCommand.Request) {
        self.init(failures: request.failures ?? Self.defaultFailures, window: request.window ?? Self.defaultWindow)
    }

    /// `{"ok": true, "ready": true}`, or `"ready": false` with every reason, one per line of
    /// `"reasons"` (`"fetcher: failed (…)"`, `"store: degraded: …"`).
    package func answer(for snapshot: AgentSnapshot) -> ReadinessCommand.Answer {
        let found = reasons(for: snapshot)
        let fleet = snapshot.fleet.map { _ in snapshot.fleetDegraded.map { "degraded: " + $0 } ?? "joined" }
        return ReadinessCommand.Answer(ready: found.isEmpty, reasons: found, failures: failures, window: window, fleet: fleet)
    }

    /// Why the agent is not ready; empty when it is. The fleet's database is not among them:
    /// an agent's local work never needs it (the answer says the fleet's state beside).
    public func reasons(for snapshot: AgentSnapshot) -> [String] {
        var reasons: [String] = []
        if snapshot.stopping { reasons.append("agent: stopping") }
        if let store = snapshot.store, let degraded = store.degraded {
            reasons.append("store: degraded: \(degraded)")
        }
        for process in snapshot.processes {
            if let reason = reason(for: process, at: snapshot.takenAt) { reasons.append("\(process.info.name): \(reason)") }
        }
        return reasons
    }

    /// Why this process keeps the agent from being ready, if it does.
    package func reason(for process: AgentSnapshot.Process, at now: Double) -> String? {
        let info = process.info
        let recent = process.failureTimes.filter { $0 > now - window }
        let flapping = failures > 0 && recent.count >= failures
        let flap = "flapping: \(recent.count) failures within \(ProcessPolicy.format(window)) s" + (info.lastExit.map { " (last: \($0))" } ?? "")
        if let signal = info.suspendedBy { return "suspended by \(SignalName.of(signal))" }
        switch info.state {
        case .running, .backoff:
            return flapping ? flap : nil
        case .starting:
            // A restart is part of the policy's cycle; the first start is not ready yet.
            if !process.wasEverReady { return "starting" }
            return flapping ? flap : nil
        case .stopping:
            if process.restartFollows { return flapping ? flap : nil }
            return "stopping"
        case .stopped:
            if process.replacing != nil { return flapping ? flap : nil }
            return "stopped"
        case .exited:
            // Only a clean exit under a policy that does not restart it: the process is done.
            return nil
        case .failed(let reason):
            return "failed (\(reason))"
        }
    }

    /// The request fields of `readiness`.
    public static let requestSchema: JSONValue = CommandDescription.object([
        "failures": ["type": "integer", "minimum": 1, "maximum": 100, "default": .number(JSONNumber(defaultFailures)),
                     "description": "Worker ends that nobody asked for within `window` that make a process flapping (not ready)."],
        "window": ["type": "number", "exclusiveMinimum": 0, "maximum": 86400, "default": .number(JSONNumber(defaultWindow)),
                   "description": "Seconds over which failures are counted."],
    ])
}
