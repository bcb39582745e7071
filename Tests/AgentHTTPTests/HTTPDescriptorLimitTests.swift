import AgentTestSupport
import Foundation
import Testing
@testable import AgentHTTP

/// With `ulimit -n` below `http.max_connections`, accepting past the limit fails with EMFILE:
/// NIO tried again thousands of times a second and new clients waited unanswered, and nothing
/// had said why. The start says it now.
@Suite(.ownThreads) struct HTTPDescriptorLimitTests {
    @Test func connectionsThatFitTheLimitAreNotWarnedAbout() {
        #expect(DescriptorBudget.warning(maximumConnections: 256, health: 0, limit: 1024) == nil)
        #expect(DescriptorBudget.warning(maximumConnections: 256, health: 16, limit: 256 + 16 + 64) == nil)
        let warning = DescriptorBudget.warning(maximumConnections: 256, health: 16, limit: 256 + 16 + 63)
        #expect(warning?.contains("/http/max_connections") == true && warning?.contains("ulimit -n") == true)
    }

    @Test func anAgentStartedUnderALowDescriptorLimitSaysMaxConnectionsDoesNotFit() throws {
        let settings = """
            {"enabled_modules": ["faults"], "store": {"enabled": false}, "processes": {"f": {"type": "fault", "tick_ms": 100}},
             "http": {"listen": "127.0.0.1:0", "tokens": ["${env:AGENT_API_TOKEN}"], "max_connections": 1000}}
            """
        let agent = try AgentRun(settings: settings, arguments: ["--no-build", "--quiet"],
                                 environment: ["AGENT_API_TOKEN": "descriptor-limit-token-0123456789"], shell: "ulimit -n 400")
        defer { _ = agent.stop() }
        let line = agent.waitForLine(onStderr: true, timeout: 120) { $0.contains("max_connections (1000) does not fit the 400 descriptors") }
        #expect(line != nil, "\(agent.transcript)")
        #expect(agent.waitForLine(onStderr: true) { $0.contains("[f] ready in") } != nil, "\(agent.transcript)")
        #expect(agent.stop() == 0, "\(agent.transcript)")
    }
}
