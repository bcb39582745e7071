import Foundation
import JSONSchema
import Logging
import Testing

/// Helpers for the output tests and their users: bounded waiting, captured log lines, the
/// JSON lines an output wrote.
package enum OutputTestSupport {
    /// Polls `condition` every 10 ms for at most `timeout` seconds; returns its last value.
    package static func waitUntil(timeout: Double = 20, _ condition: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if condition() { return true }
            usleep(10_000)
        }
        return condition()
    }

    /// Log lines, kept for assertions.
    package final class LogCapture: @unchecked Sendable {
        private let lock = NSLock()
        private var captured: [String] = []

        package var lines: [String] { lock.withLock { captured } }

        package func append(_ line: String) {
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
    package static func capturingLogger() -> (Logger, LogCapture) {
        let capture = LogCapture()
        return (Logger(label: "outputs-test") { _ in CapturingHandler(capture: capture) }, capture)
    }

    /// Parsed JSON lines of a file (every line must parse, the last one ended).
    package static func jsonLines(_ path: String) throws -> [JSONValue] {
        let text = try String(contentsOfFile: path, encoding: .utf8)
        #expect(text.isEmpty || text.hasSuffix("\n"), "\(path) ends mid-line")
        return try text.split(separator: "\n").map { try JSONValue.parse(String($0)) }
    }
}
