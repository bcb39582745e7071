/// How a webhook output POSTs one batch: `SocketHTTPTransport` for `http://` URLs,
/// `CurlTransport` for `https://`.
package protocol WebhookTransport: AnyObject {
    /// POSTs `body` (a JSON array) and waits for the answer, at most `timeout` seconds and
    /// never past the channel's stop deadline.
    func post(_ body: [UInt8], timeout: Double, channel: OutputChannel) -> WebhookAttempt

    /// Releases connections and threads; called once, last.
    func close()
}

/// The outcome of one POST.
package enum WebhookAttempt: Equatable {
    /// The server answered with this status code.
    case status(Int)
    /// No answer: connection refused, timeout, malformed response… (described).
    case failed(String)
    /// The hub's stop deadline came first.
    case interrupted
}
