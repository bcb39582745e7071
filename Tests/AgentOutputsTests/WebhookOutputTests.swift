@testable import AgentOutputs
import AgentTestSupport
import Foundation
import JSONSchema
import Testing

/// The webhook output against a real HTTP/1.1 server on 127.0.0.1, through both transports
/// (sockets, which `http://` URLs use, and libcurl, which `https://` URLs use).
@Suite(.ownThreads) struct WebhookOutputTests {
    typealias Transport = OutputHub.WebhookTransportChoice
    static let transports: [Transport] = [.byScheme, .curl]

    func makeHub(_ settings: JSONValue, transport: Transport, environment: [String: String] = [:]) throws -> (OutputHub, OutputTestSupport.LogCapture) {
        let (logger, capture) = OutputTestSupport.capturingLogger()
        let configuration = try OutputConfiguration(json: settings, environment: environment)
        let hub = try OutputHub(configurations: [configuration], baseDirectory: "/", logger: logger, standardOutput: 1, webhookTransport: transport)
        return (hub, capture)
    }

    /// The records of every request body (each must be a JSON array), in arrival order.
    func records(_ requests: [WebhookTestServer.Request], status: Int = 200) throws -> [[JSONValue]] {
        try requests.filter { $0.status == status }.map { request in
            try #require(JSONValue.parse(request.body).arrayValue, "body is not a JSON array")
        }
    }

    @Test(arguments: transports) func batchesArriveAsJSONArrays(transport: Transport) throws {
        let server = try WebhookTestServer()
        defer { server.stop() }
        let (hub, _) = try makeHub(["type": "webhook", "url": .string(server.url), "batch_size": 10, "batch_interval": 0.05], transport: transport)
        for n in 0..<25 { hub.publish(OutputTestSupport.event(n)) }
        hub.publish(.message(source: "watch", level: 2, text: "hot", time: 0))
        #expect(OutputTestSupport.waitUntil { hub.statistics[0].delivered == 26 })
        #expect(hub.stop(timeout: 30))

        let requests = server.requests
        for request in requests {
            #expect(request.method == "POST" && request.target == "/hook")
            #expect(request.headers["content-type"] == "application/json")
        }
        let batches = try records(requests)
        #expect(batches.count >= 3)
        #expect(batches.allSatisfy { !$0.isEmpty && $0.count <= 10 })
        let all = batches.flatMap { $0 }
        #expect(OutputTestSupport.numbers(all) == Array(0..<25))
        #expect(all.first == ["kind": "event", "time": "2026-11-23T03:00:00.000Z", "source": "ticker", "type": "tick", "payload": ["n": 0]])
        #expect(all.last == ["kind": "message", "time": "1970-01-01T00:00:00.000Z", "source": "watch", "level": "warning", "text": "hot"])
        #expect(hub.statistics[0] == OutputStatistics(name: "webhook \(server.url)", type: "webhook", delivered: 26))
    }

    @Test(arguments: transports) func serviceUnavailableIsRetriedWithBackoffThenDelivered(transport: Transport) throws {
        let server = try WebhookTestServer(failFirst: 2)
        defer { server.stop() }
        let (hub, log) = try makeHub([
            "type": "webhook", "url": .string(server.url), "batch_size": 3, "batch_interval": 30, "retry_initial_delay": 0.05,
        ], transport: transport)
        for n in 0..<3 { hub.publish(OutputTestSupport.event(n)) }
        #expect(OutputTestSupport.waitUntil { hub.statistics[0].delivered == 3 })
        #expect(hub.stop(timeout: 30))

        let requests = server.requests
        #expect(requests.map(\.status) == [503, 503, 200])
        #expect(Set(requests.map(\.body)).count == 1, "every attempt sends the same batch")
        #expect(try OutputTestSupport.numbers(records(requests).flatMap { $0 }) == [0, 1, 2])
        let statistics = hub.statistics[0]
        #expect(statistics.failedAttempts == 2 && statistics.dropped == 0 && statistics.lastError == "HTTP 503")
        // The delay doubles from retry to retry.
        let lines = log.lines.joined(separator: "\n")
        #expect(lines.contains("webhook \(server.url): attempt 1 failed: HTTP 503; retrying in 0.050 s"), "\(lines)")
        #expect(lines.contains("attempt 2 failed: HTTP 503; retrying in 0.1 s"), "\(lines)")
    }

    @Test(arguments: transports) func recordsWaitWhileTheServerIsDownAndArriveWhenItComesUp(transport: Transport) throws {
        let server = try WebhookTestServer(down: true)
        defer { server.stop() }
        let (hub, log) = try makeHub([
            "type": "webhook", "url": .string(server.url), "batch_size": 5, "batch_interval": 30, "buffer": 20,
            "retry_initial_delay": 0.02, "retry_max_delay": 0.05, "max_retries": 100_000,
        ], transport: transport)
        for n in 0..<5 { hub.publish(OutputTestSupport.event(n)) }
        // The first batch is being retried against the closed port…
        #expect(OutputTestSupport.waitUntil { hub.statistics[0].failedAttempts >= 2 })
        // …while the buffer keeps the newest 20 of the next 50 records.
        for n in 5..<55 { hub.publish(OutputTestSupport.event(n)) }
        #expect(hub.statistics[0].dropped == 30)
        #expect(server.requests.isEmpty)

        server.goUp()
        #expect(OutputTestSupport.waitUntil { hub.statistics[0].delivered == 25 })
        #expect(hub.stop(timeout: 30))
        #expect(try OutputTestSupport.numbers(records(server.requests).flatMap { $0 }) == Array(0..<5) + Array(35..<55))
        let statistics = hub.statistics[0]
        #expect(statistics.delivered + statistics.dropped == 55)
        #expect(log.lines.contains { $0.contains("attempt 1 failed:") })
    }

    @Test(arguments: transports) func batchIsDroppedAndCountedAfterMaxRetries(transport: Transport) throws {
        let server = try WebhookTestServer(failFirst: 3)
        defer { server.stop() }
        let (hub, log) = try makeHub([
            "type": "webhook", "url": .string(server.url), "batch_size": 2, "batch_interval": 30, "max_retries": 2,
            "retry_initial_delay": 0.01,
        ], transport: transport)
        hub.publish(OutputTestSupport.event(0))
        hub.publish(OutputTestSupport.event(1))
        #expect(OutputTestSupport.waitUntil { hub.statistics[0].dropped == 2 })
        #expect(server.requests.map(\.status) == [503, 503, 503])
        #expect(hub.statistics[0].failedAttempts == 3)
        #expect(log.lines.contains { $0.hasPrefix("error") && $0.contains("batch of 2 records dropped after 3 attempts") })

        // The server recovers; the next batch goes through.
        hub.publish(OutputTestSupport.event(2))
        hub.publish(OutputTestSupport.event(3))
        #expect(OutputTestSupport.waitUntil { hub.statistics[0].delivered == 2 })
        #expect(hub.stop(timeout: 30))
        #expect(try OutputTestSupport.numbers(records(server.requests).flatMap { $0 }) == [2, 3])
    }

    @Test(arguments: transports) func unansweredRequestTimesOutAndIsRetried(transport: Transport) throws {
        let server = try WebhookTestServer(hangFirst: 1)
        defer { server.stop() }
        let (hub, log) = try makeHub([
            "type": "webhook", "url": .string(server.url), "batch_size": 1, "timeout": 0.5, "retry_initial_delay": 0.01,
        ], transport: transport)
        hub.publish(OutputTestSupport.event(0))
        #expect(OutputTestSupport.waitUntil { hub.statistics[0].delivered == 1 })
        #expect(hub.stop(timeout: 30))
        // On a loaded machine a later attempt may time out too (and the server still answer
        // it): delivery is at least once, so only the first attempt's fate is exact.
        let statuses = server.requests.map(\.status)
        #expect(statuses.first == 0 && statuses.last == 200, "\(statuses)")
        let statistics = hub.statistics[0]
        #expect(statistics.failedAttempts >= 1 && statistics.dropped == 0)
        #expect(statistics.lastError?.lowercased().contains("timed out") == true, "\(String(describing: statistics.lastError))")
        #expect(log.lines.contains { $0.contains("attempt 1 failed:") })
    }

    @Test(arguments: transports) func environmentReferencesReachTheRequest(transport: Transport) throws {
        let server = try WebhookTestServer()
        defer { server.stop() }
        let (hub, _) = try makeHub([
            "type": "webhook", "url": "http://127.0.0.1:${env:HOOK_PORT}/hook?agent=station", "batch_size": 1,
            "headers": ["Authorization": "Bearer ${env:HOOK_TOKEN}", "X-Agent": "station"],
        ], transport: transport, environment: ["HOOK_PORT": String(server.port), "HOOK_TOKEN": "s3cret"])
        hub.publish(OutputTestSupport.event(1))
        #expect(OutputTestSupport.waitUntil { hub.statistics[0].delivered == 1 })
        #expect(hub.stop(timeout: 30))
        let request = try #require(server.requests.first)
        #expect(request.target == "/hook?agent=station")
        #expect(request.headers["authorization"] == "Bearer s3cret")
        #expect(request.headers["x-agent"] == "station")
        #expect(hub.statistics[0].name == "webhook http://127.0.0.1:${env:HOOK_PORT}/hook")
    }

    /// A failed attempt's text names the host (sockets: "cannot connect to HOST:PORT", curl:
    /// "Failed to connect to HOST port …"); a host from the environment was shown in the log
    /// and in status.
    @Test(arguments: transports) func hostFromTheEnvironmentIsNotShownWhenAnAttemptFails(transport: Transport) throws {
        let server = try WebhookTestServer(down: true)
        defer { server.stop() }
        let (hub, log) = try makeHub([
            "type": "webhook", "url": .string("http://${env:HOOK_HOST}:\(server.port)/"), "batch_size": 1, "max_retries": 0,
        ], transport: transport, environment: ["HOOK_HOST": "127.0.0.1"])
        hub.publish(OutputTestSupport.event(0))
        #expect(OutputTestSupport.waitUntil { hub.statistics[0].dropped == 1 })
        #expect(hub.stop(timeout: 30))
        let lastError = try #require(hub.statistics[0].lastError)
        let failures = log.lines.filter { $0.contains("attempt 1 failed") }
        #expect(!failures.isEmpty)
        for text in failures + [lastError] {
            #expect(!text.contains("127.0.0.1"), "\(text)")
        }
        #expect(lastError.contains("${env:HOOK_HOST}"), "\(lastError)")
    }

    @Test(arguments: transports) func stopSendsWhatIsQueuedWithoutWaitingForTheBatchInterval(transport: Transport) throws {
        let server = try WebhookTestServer()
        defer { server.stop() }
        let (hub, _) = try makeHub(["type": "webhook", "url": .string(server.url), "batch_interval": 60], transport: transport)
        for n in 0..<7 { hub.publish(OutputTestSupport.event(n)) }
        #expect(hub.stop(timeout: 10))
        #expect(try records(server.requests).map(OutputTestSupport.numbers) == [Array(0..<7)])
        #expect(hub.statistics[0].delivered == 7)
    }

    @Test func stopGivesUpOnAServerThatStaysDown() throws {
        let server = try WebhookTestServer(down: true)
        defer { server.stop() }
        let (hub, _) = try makeHub([
            "type": "webhook", "url": .string(server.url), "batch_size": 2, "retry_initial_delay": 0.02, "max_retries": 1_000_000,
        ], transport: .byScheme)
        for n in 0..<5 { hub.publish(OutputTestSupport.event(n)) }
        #expect(OutputTestSupport.waitUntil { hub.statistics[0].failedAttempts >= 1 })
        #expect(hub.stop(timeout: 0.2) == false)
        let statistics = hub.statistics[0]
        #expect(statistics.delivered == 0 && statistics.dropped == 5 && statistics.queued == 0)
    }
}
