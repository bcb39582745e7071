import AgentCommands
import AgentCore
import HTTPTypes
import JSONSchema
import Logging
import NIOCore
import NIOHTTPTypes

/// Holds each connection of the HTTP front to the two bounds a slow or greedy client would
/// otherwise use to take every slot (slowloris): at most `max_connections_per_client` per
/// client address (more are answered 429 and closed at once), and a request head complete
/// within `header_timeout` (else 408, and the connection is closed), and a body that keeps
/// coming: within `body_timeout` plus a second per 4 KiB of it, counting only the time the
/// server waits to read (a body sent a byte a second, 300 such connections from five loopback
/// addresses, held every slot of the API for as long as the client went on).
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
        /// `http.body_timeout` (seconds).
        var bodySeconds: Double = 10
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
    /// The body being read: its bytes so far, the seconds the server has waited for them with
    /// a read asked for, since when it waits now (nil: it is not waiting), and its deadline.
    private var bodyBytes = 0
    private var bodyWaited = 0.0
    private var waitingSince: Double?
    private var bodyDeadline: Scheduled<Void>?
    /// The answer to the request being read has begun (a 408 cannot come before it then).
    private var answerBegun = false
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
            answerBegun = answersOwed > 0
            answersOwed += 1
            (bodyBytes, bodyWaited, waitingSince) = (0, 0, nil)
        case .body(let bytes):
            bodyBytes += bytes.readableBytes
            bodyArrived()
        case .end:
            readingBody = false
            requestsRead += 1
            bodyArrived()
            bodyDeadline?.cancel()
            bodyDeadline = nil
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch unwrapOutboundIn(data) {
        case .head: answerBegun = true
        case .end: answersOwed = max(answersOwed - 1, 0)
        case .body: break
        }
        context.write(data, promise: promise)
    }

    /// A read asked for by what reads the request: while a body is due, the time until its
    /// next bytes is the client's (a read not asked for — the server busy, its buffer full —
    /// is not).
    func read(context: ChannelHandlerContext) {
        if readingBody, waitingSince == nil {
            waitingSince = Self.now()
            armBodyDeadline(context)
        }
        context.read()
    }

    /// Bytes of the body came: the wait for them is counted, and its deadline is off.
    private func bodyArrived() {
        if let since = waitingSince { bodyWaited += Self.now() - since }
        waitingSince = nil
        bodyDeadline?.cancel()
        bodyDeadline = nil
    }

    /// The seconds the body may still be waited for: `body_timeout` plus a second per 4 KiB
    /// arrived, less the time waited so far.
    private var bodyAllowance: Double {
        limits.bodySeconds + Double(bodyBytes) / Double(HTTPSettings.bodyBytesPerSecond) - bodyWaited
    }

    private func armBodyDeadline(_ context: ChannelHandlerContext) {
        bodyDeadline?.cancel()
        let allowance = max(bodyAllowance, 0)
        bodyDeadline = context.eventLoop.assumeIsolated().scheduleTask(in: .milliseconds(Int64(allowance * 1000) + 1)) { [self] in
            bodyDeadline = nil
            guard readingBody, let since = waitingSince, let context = self.context, context.channel.isActive else { return }
            guard Self.now() - since >= bodyAllowance else { return armBodyDeadline(context) }
            bodyTimedOut(context)
        }
    }

    /// The body did not keep coming: 408 unless an answer has begun, then the connection closes.
    private func bodyTimedOut(_ context: ChannelHandlerContext) {
        readingBody = false
        if let closed = counts.noteSlowBody() {
            logger.notice("http: closed \(closed) connection(s) whose request body did not keep coming (http.body_timeout), the last from \(context.channel.remoteAddress?.ipAddress ?? "?")")
        }
        guard !answerBegun else { return context.close(promise: nil) }
        answer(context, .requestTimeout, code: "timeout",
               "the request's body did not arrive in time: it may take \(limits.bodySeconds.compactText) s (http.body_timeout) plus a second per 4 KiB; send it at once")
    }

    static func now() -> Double { Double(NIODeadline.now().uptimeNanoseconds) / 1e9 }

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
        bodyDeadline?.cancel()
        bodyDeadline = nil
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
