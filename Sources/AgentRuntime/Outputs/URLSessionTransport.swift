import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// POSTs through URLSession, for `https://` webhooks (TLS comes from libcurl on Linux).
///
/// Plain `http://` goes through `SocketHTTPTransport` instead: on Linux, URLSession was
/// measured to keep about 150 bytes per request for good. The completion handler runs on
/// URLSession's own queue and hands the outcome over under the channel's lock.
final class URLSessionTransport: WebhookTransport {
    private let url: URL
    private let headers: [OutputConfiguration.Webhook.Header]
    private let session: URLSession

    /// The completion handler's answer, guarded by the channel's lock.
    private final class Outcome: @unchecked Sendable {
        var attempt: WebhookAttempt?
    }

    init(url: URL, headers: [OutputConfiguration.Webhook.Header], timeout: Double) {
        self.url = url
        self.headers = headers
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = timeout
        configuration.timeoutIntervalForResource = timeout
        configuration.httpCookieStorage = nil
        configuration.urlCache = nil
        session = URLSession(configuration: configuration)
    }

    func post(_ body: [UInt8], timeout: Double, channel: OutputChannel) -> WebhookAttempt {
        var request = URLRequest(url: url, cachePolicy: .reloadIgnoringLocalCacheData, timeoutInterval: timeout)
        request.httpMethod = "POST"
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.setValue("AgentRuntime", forHTTPHeaderField: "User-Agent")
        for header in headers { request.setValue(header.value, forHTTPHeaderField: header.name) }
        request.httpBody = Data(body)

        let outcome = Outcome()
        let task = session.dataTask(with: request) { _, response, error in
            let attempt: WebhookAttempt
            if let response = response as? HTTPURLResponse {
                attempt = .status(response.statusCode)
            } else {
                attempt = .failed(Self.describe(error, timeout: timeout))
            }
            channel.notify { outcome.attempt = attempt }
        }
        task.resume()
        // URLSession enforces `timeout` itself; the extra second covers its own latency.
        let answered = channel.wait(until: OutputChannel.now() + timeout + 1) { outcome.attempt != nil }
        if answered, let attempt = channel.synchronized({ outcome.attempt }) { return attempt }
        task.cancel()
        return channel.isPastStopDeadline ? .interrupted : .failed("timed out after \(SocketHTTPTransport.seconds(timeout)) s")
    }

    func close() {
        session.invalidateAndCancel()
    }

    /// libcurl's messages are good ("Failed to connect to … port …: Couldn't connect to
    /// server"), except for timeouts, which come as a bare "NSURLErrorDomain error -1001".
    private static func describe(_ error: (any Error)?, timeout: Double) -> String {
        guard let error else { return "no HTTP response" }
        if let urlError = error as? URLError, urlError.code == .timedOut {
            return "timed out after \(SocketHTTPTransport.seconds(timeout)) s"
        }
        return error.localizedDescription
    }
}
