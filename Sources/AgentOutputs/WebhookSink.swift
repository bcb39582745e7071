import Foundation

/// POSTs batches of records as a JSON array, retrying failed attempts with exponential
/// backoff; after `max_retries` retries the batch is dropped, counted and logged.
///
/// While a batch is retried, new records wait in the channel's bounded queue (the `buffer`),
/// which drops its oldest record when full; so an outage shorter than the retry schedule
/// loses nothing as long as the buffer holds what arrives meanwhile.
package final class WebhookSink: OutputSink {
    package let batchLimit: Int
    package let linger: Double
    private let settings: OutputConfiguration.Webhook
    private let label: String
    private let transport: any WebhookTransport

    /// Retries never come faster than this, so a zero delay cannot spin on a dead server.
    package static let minimumDelay = 0.01

    package init(settings: OutputConfiguration.Webhook, label: String, transport: any WebhookTransport) {
        self.settings = settings
        self.label = label
        self.transport = transport
        batchLimit = settings.batchSize
        linger = settings.batchInterval
    }

    /// The delay before retry number `retry` (1-based): the initial delay, doubled per retry,
    /// capped.
    package static func delay(beforeRetry retry: Int, initial: Double, maximum: Double) -> Double {
        let doubled = initial * pow(2, Double(min(retry - 1, 60)))
        return max(minimumDelay, min(doubled, maximum))
    }

    package func deliver(_ batch: [OutputRecord], channel: OutputChannel) {
        let body = Self.body(batch)
        var attempt = 0
        while true {
            attempt += 1
            let problem: String
            switch transport.post(body, timeout: settings.timeout, channel: channel) {
            case .status(let code) where (200..<300).contains(code):
                channel.recordDelivered(batch.count)
                if attempt > 1 {
                    channel.logger.notice("\(label): delivered \(batch.count) records on attempt \(attempt)")
                }
                return
            case .status(let code):
                problem = "HTTP \(code)"
            case .failed(let description):
                // The transport's text may name a host that came from the environment.
                problem = settings.redacted(description)
            case .interrupted:
                channel.recordFailure("interrupted by stop")
                channel.recordDropped(batch.count, atStop: true)
                channel.logger.warning("\(label): stop deadline reached during attempt \(attempt); batch of \(batch.count) records dropped")
                return
            }
            channel.recordFailure(problem)
            if attempt > settings.maxRetries {
                channel.recordDropped(batch.count)
                channel.logger.error(
                    "\(label): attempt \(attempt) failed: \(problem); batch of \(batch.count) records dropped after \(attempt) attempts"
                )
                return
            }
            let delay = Self.delay(beforeRetry: attempt, initial: settings.retryInitialDelay, maximum: settings.retryMaxDelay)
            channel.logger.warning("\(label): attempt \(attempt) failed: \(problem); retrying in \(Self.format(delay)) s")
            if !channel.sleep(until: OutputChannel.now() + delay) {
                channel.recordDropped(batch.count, atStop: true)
                channel.logger.warning("\(label): stop deadline reached before retry; batch of \(batch.count) records dropped")
                return
            }
        }
    }

    package func flush(channel: OutputChannel) {}

    package func close(channel: OutputChannel) {
        transport.close()
    }

    /// `[record,record,…]`: each record rendered once, joined without re-parsing.
    package static func body(_ batch: [OutputRecord]) -> [UInt8] {
        var body: [UInt8] = [UInt8(ascii: "[")]
        for (index, record) in batch.enumerated() {
            if index > 0 { body.append(UInt8(ascii: ",")) }
            body.append(contentsOf: record.jsonLine().utf8)
        }
        body.append(UInt8(ascii: "]"))
        return body
    }

    /// `1.0`, `0.05`: one decimal from a tenth of a second up, more below.
    private static func format(_ seconds: Double) -> String {
        String(format: seconds >= 0.1 ? "%.1f" : "%.3f", seconds)
    }
}
