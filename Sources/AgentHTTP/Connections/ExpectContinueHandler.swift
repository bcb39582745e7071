import JSONSchema
import NIOCore
import NIOHTTP1

/// Answers `Expect: 100-continue` (RFC 9110 §10.1.1), which clients send before a body they
/// would rather not send in vain (curl above 1 MiB, .NET, many HTTP libraries): `100
/// Continue` at once when the body may follow, or the final `413` at once when its announced
/// length is over `http.max_body_bytes`, and the connection is closed unread. Without it such a
/// client waited for its own timeout (curl: 1 s) before every big request, then sent a body
/// that could only be refused.
///
/// Behind the HTTP/1 decoder, ahead of the conversion to HTTP types: the request's version is
/// known there (an HTTP/1.0 request's expectation is ignored, as the RFC asks).
final class ExpectContinueHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundIn = HTTPServerResponsePart
    typealias OutboundOut = HTTPServerResponsePart

    private let maximumBodyBytes: Int
    /// Requests passed on whose answer has not ended: a refusal of ours must not come between
    /// the parts of an answer to an earlier, pipelined request.
    private var answersOwed = 0
    /// After a refusal: the rest of what the client sends is dropped until the close.
    private var refused = false

    init(maximumBodyBytes: Int) { self.maximumBodyBytes = maximumBodyBytes }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !refused else { return }
        guard case .head(let head) = unwrapInboundIn(data), head.version.major > 1 || head.version.minor >= 1,
              head.headers[canonicalForm: "expect"].contains(where: { $0.lowercased() == "100-continue" }) else {
            if case .head = unwrapInboundIn(data) { answersOwed += 1 }
            return context.fireChannelRead(data)
        }
        let length = head.headers.first(name: "content-length").flatMap { Int($0) }
        if let length, length > maximumBodyBytes, answersOwed == 0 {
            refused = true
            return refuse(context, version: head.version, length: length)
        }
        answersOwed += 1
        context.writeAndFlush(wrapOutboundOut(.head(HTTPResponseHead(version: head.version, status: .continue))), promise: nil)
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data) { answersOwed = max(answersOwed - 1, 0) }
        context.write(data, promise: promise)
    }

    /// The final answer to a body announced too long, then the close.
    private func refuse(_ context: ChannelHandlerContext, version: HTTPVersion, length: Int) {
        let message = "the request body is \(length) bytes, larger than \(maximumBodyBytes) (http.max_body_bytes); it was not read"
        let body = ByteBuffer(string: JSONValue.object(["ok": false, "error": .string(message), "code": "too_large"]).serialized())
        let headers = HTTPHeaders([("content-type", "application/json"), ("content-length", String(body.readableBytes)), ("connection", "close")])
        context.write(wrapOutboundOut(.head(HTTPResponseHead(version: version, status: .payloadTooLarge, headers: headers))), promise: nil)
        context.write(wrapOutboundOut(.body(.byteBuffer(body))), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.end(nil))).assumeIsolated().whenComplete { _ in context.close(promise: nil) }
    }
}
