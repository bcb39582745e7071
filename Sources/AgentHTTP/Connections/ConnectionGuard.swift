import AgentCore
import HTTPTypes
import JSONSchema
import Logging
import NIOCore
import NIOHTTPTypes

/// Holds each connection of the HTTP front to the two bounds a slow or greedy client would
/// otherwise use to take every slot (slowloris): at most `max_connections_per_client` per
/// client address (more are answered 429 and closed at once), and a request head complete
/// within `header_timeout` (else 408, and the connection is closed).
///
/// The head's clock starts when the connection starts, and on a kept-alive connection with
/// the first byte of the next request (the time between requests is `idle_timeout`'s, as in
/// nginx and Go's `ReadHeaderTimeout`). The bytes are seen by ``RequestByteWatcher``, ahead
/// of the HTTP decoder; the parts here, behind it.
final class ConnectionGuard: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    /// The bounds, from the settings.
    struct Limits: Sendable {
        var perClient: Int
        var headerTimeout: TimeAmount
        /// The setting named in the answers (seconds).
        var headerSeconds: Double
        /// `http.max_body_bytes`: a body announced longer is refused before it is sent when
        /// the client expects `100 Continue` (``ExpectContinueHandler``).
        var maximumBodyBytes: Int
    }

    private let counts: ClientConnectionCounts
    private let limits: Limits
    private let logger: Logger
    private var context: ChannelHandlerContext?
    /// The address counted in ``counts``, once counted.
    private var client: String?
    private var started = false
    private var deadline: Scheduled<Void>?
    /// Bytes of a head arrived since the last complete one (a 408 then has a request to answer).
    private var headBytesSeen = false
    private var readingBody = false
    /// Requests read whose answer has not ended yet.
    private(set) var answersOwed = 0
    /// Requests read in full so far: ``RequestByteWatcher`` compares it around a read.
    private(set) var requestsRead = 0

    init(counts: ClientConnectionCounts, limits: Limits, logger: Logger) {
        self.counts = counts
        self.limits = limits
        self.logger = logger
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        if context.channel.isActive { start(context) }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        finish()
        self.context = nil
    }

    func channelActive(context: ChannelHandlerContext) {
        // The handlers behind see the connection open before a refusal closes it.
        context.fireChannelActive()
        start(context)
    }

    func channelInactive(context: ChannelHandlerContext) {
        finish()
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head:
            deadline?.cancel()
            deadline = nil
            headBytesSeen = false
            readingBody = true
            answersOwed += 1
        case .body:
            break
        case .end:
            readingBody = false
            requestsRead += 1
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data) { answersOwed = max(answersOwed - 1, 0) }
        context.write(data, promise: promise)
    }

    /// After a read: bytes that are not a body's and did not end with a request's end are
    /// (part of) the next request's head, whose clock starts now if it has not yet.
    func bytesRead(endedWithARequest: Bool) {
        guard !readingBody, !endedWithARequest, let context else { return }
        headBytesSeen = true
        arm(context)
    }

    private func start(_ context: ChannelHandlerContext) {
        guard !started else { return }
        started = true
        let address = context.channel.remoteAddress?.ipAddress ?? "unknown"
        guard counts.open(address, limit: limits.perClient) else {
            if let refused = counts.noteRefusal() {
                logger.notice("http: refused \(refused) connection(s) over max_connections_per_client (\(limits.perClient)), the last from \(address)")
            }
            return answer(context, .tooManyRequests, code: "rate_limited", extra: [.retryAfter: "1"],
                          "\(address) has \(limits.perClient) connections open, the most one client may (http.max_connections_per_client); reuse them, or close some first")
        }
        client = address
        arm(context)
    }

    private func finish() {
        deadline?.cancel()
        deadline = nil
        if let client { counts.close(client) }
        client = nil
    }

    private func arm(_ context: ChannelHandlerContext) {
        guard deadline == nil else { return }
        deadline = context.eventLoop.assumeIsolated().scheduleTask(in: limits.headerTimeout) { [self] in
            headTimedOut()
        }
    }

    /// The head did not arrive in time: 408 when it had begun and no answer is being written
    /// (a response is possible), a plain close otherwise (a connection that sent nothing).
    private func headTimedOut() {
        deadline = nil
        guard let context, context.channel.isActive else { return }
        guard headBytesSeen, answersOwed == 0 else { return context.close(promise: nil) }
        answer(context, .requestTimeout, code: "timeout",
               "the request's head (request line and headers) did not arrive in full within \(limits.headerSeconds.compactText) s (http.header_timeout); send it at once")
    }

    /// A JSON error answer, then the connection is closed.
    private func answer(_ context: ChannelHandlerContext, _ status: HTTPResponse.Status, code: String,
                        extra: HTTPFields = [:], _ message: String) {
        let body = ByteBuffer(string: JSONValue.object(["ok": false, "error": .string(message), "code": .string(code)]).serialized())
        var fields = extra
        fields[.contentType] = "application/json"
        fields[.contentLength] = String(body.readableBytes)
        fields[.connection] = "close"
        context.write(wrapOutboundOut(.head(HTTPResponse(status: status, headerFields: fields))), promise: nil)
        context.write(wrapOutboundOut(.body(body)), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        context.close(promise: nil)
    }
}
