@testable import AgentOutputs
import AgentTestSupport
import Foundation
import JSONSchema
import Testing

/// Webhook outputs configured directly (past the schema and the reader, which refuse these
/// values) with spans no wait can hold: the output thread must neither trap nor hang the stop.
@Suite(.ownThreads) struct WebhookHugeValueTests {
    private func hub(_ webhook: OutputConfiguration.Webhook, transport: OutputHub.WebhookTransportChoice = .byScheme) throws -> (OutputHub, OutputTestSupport.LogCapture) {
        let (logger, capture) = OutputTestSupport.capturingLogger()
        let configuration = OutputConfiguration(name: "hook", destination: .webhook(webhook))
        return (try OutputHub(configurations: [configuration], baseDirectory: "/", logger: logger, standardOutput: 1, webhookTransport: transport), capture)
    }

    @Test func batchIntervalOfAMillionYearsWaitsAndStillDeliversAtStop() throws {
        let server = try WebhookTestServer()
        defer { server.stop() }
        let (hub, _) = try hub(.init(url: URL(string: server.url)!, batchSize: 100, batchInterval: 1e12))
        hub.publish(OutputTestSupport.event(0))
        // The record waits for its batch (the thread sleeps on the huge linger); stop sends it.
        Thread.sleep(forTimeInterval: 0.1)
        #expect(hub.statistics[0].delivered == 0)
        #expect(hub.stop(timeout: 30))
        #expect(hub.statistics[0].delivered == 1)
    }

    @Test func batchIntervalOfInfinityDoesNotTrap() throws {
        let server = try WebhookTestServer()
        defer { server.stop() }
        let (hub, _) = try hub(.init(url: URL(string: server.url)!, batchSize: 100, batchInterval: .infinity))
        hub.publish(OutputTestSupport.event(0))
        Thread.sleep(forTimeInterval: 0.1)
        #expect(hub.stop(timeout: 30))
        #expect(hub.statistics[0].delivered == 1)
    }

    @Test func hugeRetryDelaysWithAnUnreachableURLWaitUntilStop() throws {
        let server = try WebhookTestServer(down: true)
        defer { server.stop() }
        let (hub, log) = try hub(.init(url: URL(string: server.url)!, batchSize: 1, batchInterval: 0, timeout: 1,
                                       retryInitialDelay: 1e12, retryMaxDelay: 1e12))
        hub.publish(OutputTestSupport.event(0))
        #expect(OutputTestSupport.waitUntil { log.lines.contains { $0.contains("attempt 1 failed") && $0.contains("retrying in") } }, "\(log.lines)")
        let started = Date()
        // The stop cuts the retry's sleep short: the batch is dropped and counted.
        _ = hub.stop(timeout: 1)
        #expect(Date().timeIntervalSince(started) < 10)
        #expect(hub.statistics[0].dropped == 1)
    }

    @Test func httpsTimeoutOf1e300GoesThroughLibcurlWithoutTrapping() throws {
        let server = try WebhookTestServer()
        defer { server.stop() }
        let (hub, _) = try hub(.init(url: URL(string: server.url)!, batchSize: 1, batchInterval: 0, timeout: 1e300), transport: .curl)
        hub.publish(OutputTestSupport.event(0))
        #expect(OutputTestSupport.waitUntil { hub.statistics[0].delivered == 1 }, "\(hub.statistics[0])")
        #expect(hub.stop(timeout: 30))
    }

    @Test func httpTimeoutOfInfinityThroughSocketsDoesNotTrap() throws {
        let server = try WebhookTestServer()
        defer { server.stop() }
        let (hub, _) = try hub(.init(url: URL(string: server.url)!, batchSize: 1, batchInterval: 0, timeout: .infinity))
        hub.publish(OutputTestSupport.event(0))
        #expect(OutputTestSupport.waitUntil { hub.statistics[0].delivered == 1 }, "\(hub.statistics[0])")
        #expect(hub.stop(timeout: 30))
    }
}
