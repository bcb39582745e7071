@testable import AgentOutputs
import Foundation
import JSONSchema
import Logging
@testable import AgentRuntime

/// Helpers for the output tests: bounded waiting, captured log lines, records to publish.
enum OutputTestSupport {
    /// Polls `condition` every 10 ms for at most `timeout` seconds; returns its last value.
    static func waitUntil(timeout: Double = 20, _ condition: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if condition() { return true }
            usleep(10_000)
        }
        return condition()
    }

    /// Log lines, kept for assertions.
    final class LogCapture: @unchecked Sendable {
        private let lock = NSLock()
        private var captured: [String] = []

        var lines: [String] { lock.withLock { captured } }

        func append(_ line: String) {
            lock.withLock { captured.append(line) }
        }
    }

    private struct CapturingHandler: LogHandler {
        let capture: LogCapture
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .debug
        var metadataProvider: Logger.MetadataProvider?

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            capture.append("\(event.level) \(event.message)")
        }
    }

    /// A logger whose lines end up in the returned capture.
    static func capturingLogger() -> (Logger, LogCapture) {
        let capture = LogCapture()
        return (Logger(label: "outputs-test") { _ in CapturingHandler(capture: capture) }, capture)
    }

    /// Event number `n` of a test stream: type `tick`, payload `{"n": n}`.
    static func event(_ n: Int, source: String = "ticker") -> OutputRecord {
        .event(source: source, type: "tick", payload: Array("{\"n\":\(n)}".utf8), time: 1_795_402_800_000_000_000 + Int64(n) * 1_000_000)
    }

    /// The `payload.n` of each record (parsed JSON objects).
    static func numbers(_ records: [JSONValue]) -> [Int] {
        records.compactMap { $0["payload"]?["n"]?.numberValue?.intValue }
    }
}
