import AgentCore
import CAgentSystem
import Foundation

/// POSTs through libcurl, for `https://` webhooks (and TLS). libcurl is loaded with dlopen on
/// the first POST, so that agents without an https webhook never map it: linking it (as
/// FoundationNetworking's URLSession does) cost every agent-control start about 15 ms and
/// several MB. Plain `http://` goes through `SocketHTTPTransport`.
package final class CurlTransport: WebhookTransport {
    private let url: String
    private let headers: [String]

    /// What the abort check sees: the channel (whose stop deadline may come) and the POST's own
    /// deadline.
    private final class Attempt {
        let channel: OutputChannel
        let deadline: Double
        init(channel: OutputChannel, deadline: Double) {
            self.channel = channel
            self.deadline = deadline
        }
    }

    package init(url: URL, headers: [OutputConfiguration.Webhook.Header]) {
        self.url = url.absoluteString
        var lines = ["Content-Type: application/json", "Accept: */*"]
        for header in headers {
            lines.removeAll { $0.lowercased().hasPrefix(header.name.lowercased() + ":") }
            lines.append("\(header.name): \(header.value)")
        }
        // libcurl would send `Expect: 100-continue` for large bodies and wait for it.
        if !lines.contains(where: { $0.lowercased().hasPrefix("expect:") }) { lines.append("Expect:") }
        self.headers = lines
    }

    /// Why https webhooks cannot work on this machine, or nil.
    package static var problem: String? {
        agent_curl_problem().map {
            "https webhooks need libcurl (libcurl.so.4, or the library AGENT_LIBCURL names; on Debian `apt-get install libcurl4`), which could not be loaded: \(String(cString: $0))"
        }
    }

    package func post(_ body: [UInt8], timeout: Double, channel: OutputChannel) -> WebhookAttempt {
        let attempt = Attempt(channel: channel, deadline: OutputChannel.now() + timeout)
        let check: agent_abort_check = { context in
            let attempt = Unmanaged<Attempt>.fromOpaque(context!).takeUnretainedValue()
            return attempt.channel.effectiveDeadline(attempt.deadline) < attempt.deadline ? 1 : 0
        }
        var status = 0
        var message = [CChar](repeating: 0, count: 512)
        let cHeaders = headers.map { strdup($0) }
        defer { cHeaders.forEach { free($0) } }
        let result = withExtendedLifetime(attempt) {
            cHeaders.map { UnsafePointer($0) }.withUnsafeBufferPointer { headerList in
                body.withUnsafeBytes { bytes in
                    agent_curl_post(url, headerList.baseAddress, Int32(headerList.count), bytes.baseAddress, bytes.count,
                                    max(1, Saturating.milliseconds(timeout)), check, Unmanaged.passUnretained(attempt).toOpaque(),
                                    &status, &message, message.count)
                }
            }
        }
        let text = String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        switch result {
        case 0: return .status(status)
        case 2: return .interrupted
        case 3: return .failed("timed out after \(timeout.compactText) s")
        case -1: return .failed(Self.problem ?? text)
        default: return .failed(text)
        }
    }

    package func close() {}
}
