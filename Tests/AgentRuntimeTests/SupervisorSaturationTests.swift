@testable import AgentBase
@testable import AgentLoop
@testable import AgentSupervision
import AgentTestSupport
import Foundation
import JSONSchema
import Logging
import Testing
@testable import AgentRuntime

/// A supervisor embedded in the test, with policies built directly (past the host schema,
/// which refuses these values): real workers of the faults module, timers of 2^31 ms and
/// more, infinite delays and watchdogs, a start-limit window of 1e300 s. Each of these used
/// to trap in the supervisor; it must supervise and stop as usual.
@Suite(.ownThreads, .serialized) struct SupervisorSaturationTests {
    private func planned(_ name: String, settings: JSONObject, policy: ProcessPolicy) -> PlannedProcess {
        PlannedProcess(name: name, type: "fault", kind: "datasource",
                       module: ModuleLocation(name: "faults", library: TestPaths.products + "/libfaults.so", sourceDirectory: nil),
                       settings: settings, subscriptions: [], policy: policy)
    }

    @Test func hugeTimersFromPoliciesThatBypassTheSchemaDoNotTrapTheSupervisor() throws {
        var slow = ProcessPolicy()
        slow.stopTimeout = 3e6          // more than 2^31 ms
        slow.watchdog = .infinity       // was Int(watchdog * 1000) at spawn
        slow.startTimeout = 1e300
        var crashing = ProcessPolicy()
        crashing.initialDelay = .infinity
        crashing.maximumDelay = .infinity
        crashing.multiplier = 1e300
        var limited = ProcessPolicy()
        limited.within = 1e300          // was Int(within) in the start-limit message
        limited.maximumRestarts = 0
        let (logger, log) = OutputTestSupport.capturingLogger()
        let supervisor = Supervisor.make(
            configuration: SupervisorConfiguration(workerPath: TestPaths.products + "/agent-worker", environment: ProcessInfo.processInfo.environment),
            processes: [
                planned("slow", settings: ["mode": "healthy", "tick_ms": 1000], policy: slow),
                planned("crashing", settings: ["mode": "exit", "after_ms": 0], policy: crashing),
                planned("limited", settings: ["mode": "exit", "after_ms": 0], policy: limited),
            ],
            console: ConsoleOutput(json: false, showEvents: false, fd: -1), logger: logger)
        supervisor.inbox.isolated {
            supervisor.startInTurns(supervisor.processes)
            func state(_ name: String) -> ProcessState? { supervisor.process(named: name)?.state }
            supervisor.run(until: {
                guard state("slow") == .running, case .backoff? = state("crashing"), case .failed? = state("limited") else { return false }
                return true
            }, timeout: 30)
            #expect(state("slow") == .running, "\(log.lines)")
            guard case .backoff(let retryAt)? = state("crashing") else {
                Issue.record("crashing is \(String(describing: state("crashing"))): \(log.lines)")
                return
            }
            #expect(retryAt > EventLoop.now() + 86_400 * 365)
            guard case .failed(let reason)? = state("limited") else {
                Issue.record("limited is \(String(describing: state("limited"))): \(log.lines)")
                return
            }
            #expect(reason.contains("restarted 0 times within 1e+300 s (the start limit)"), "\(reason)")
            // Stop: SIGTERM to the workers and a stop timer of 3e6 s, which the loop waits on.
            supervisor.stopAll()
            supervisor.run(until: { supervisor.processes.allSatisfy { !$0.hasWorker } }, timeout: 30)
            #expect(state("slow") == .stopped, "\(log.lines)")
            #expect(state("crashing") == .stopped)
            #expect(log.lines.contains { $0.contains("stopped (exited with status 0)") }, "\(log.lines)")
        }
    }
}
