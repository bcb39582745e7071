@testable import AgentOutputs
import AgentTestSupport
import Foundation
import Testing

/// Figures behind the outputs' design choices, printed rather than asserted. Opt-in, as they
/// take a while: `AGENT_OUTPUT_MEASURE=1 swift test --skip-build --filter OutputMeasurements`.
@Suite(.ownThreads, .serialized, .enabled(if: ProcessInfo.processInfo.environment["AGENT_OUTPUT_MEASURE"] != nil))
struct OutputMeasurements {
    static func residentKilobytes() -> Int {
        let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
        let line = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") } ?? ""
        return Int(line.split(separator: " ").dropFirst().first ?? "") ?? -1
    }

    /// Resident memory per POST, for each transport (URLSession, used for https before libcurl
    /// was called directly, kept about 150 bytes per request for good).
    @Test(.timeLimit(.minutes(10)), arguments: [OutputHub.WebhookTransportChoice.byScheme, .curl])
    func residentMemoryPerRequest(transport: OutputHub.WebhookTransportChoice) throws {
        let server = try WebhookTestServer(keepsRequests: false)
        defer { server.stop() }
        let (logger, _) = OutputTestSupport.capturingLogger()
        let count = 20_000
        let configuration = try OutputConfiguration(json: [
            "type": "webhook", "url": .string(server.url), "batch_size": 1, "batch_interval": 0, "buffer": .number(.init(count)),
        ], environment: [:])
        let hub = try OutputHub(configurations: [configuration], baseDirectory: "/", logger: logger, standardOutput: 1, webhookTransport: transport)
        defer { hub.stop(timeout: 30) }
        func post(_ n: Int) -> Double {
            let before = hub.statistics[0].delivered
            let start = Date()
            for i in 0..<n { hub.publish(OutputTestSupport.event(i)) }
            #expect(OutputTestSupport.waitUntil(timeout: 600) { hub.statistics[0].delivered == before + UInt64(n) })
            return Date().timeIntervalSince(start)
        }
        _ = post(2000)  // warm up: connections, allocator pools
        // Three rounds: a leak grows round after round, allocator warm-up does not.
        for round in 1...3 {
            let before = Self.residentKilobytes()
            let seconds = post(count)
            let growth = Self.residentKilobytes() - before
            print(String(
                format: "webhook %@ round %d: %d POSTs in %.1f s (%.0f µs each); resident memory %+d KiB (%.0f bytes per request)",
                "\(transport)", round, count, seconds, seconds / Double(count) * 1e6, growth, Double(growth * 1024) / Double(count)
            ))
        }
    }

    /// The supervisor's cost of `publish`: an O(1) append under a lock.
    @Test func publishCost() throws {
        let folder = TestPaths.temporaryDirectory("outputs-measure")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let (logger, _) = OutputTestSupport.capturingLogger()
        let hub = try OutputHub(json: [["type": "file", "path": "out.jsonl", "buffer": 1000]], baseDirectory: folder, logger: logger, environment: [:])
        let records = (0..<1000).map { OutputTestSupport.event($0) }
        let count = 1_000_000
        let start = Date()
        for i in 0..<count { hub.publish(records[i % records.count]) }
        let seconds = Date().timeIntervalSince(start)
        hub.stop(timeout: 30)
        let statistics = hub.statistics[0]
        print(String(
            format: "publish: %.0f ns per record (%d records; %llu written, %llu dropped as the file output fell behind)",
            seconds / Double(count) * 1e9, count, statistics.delivered, statistics.dropped
        ))
    }
}
