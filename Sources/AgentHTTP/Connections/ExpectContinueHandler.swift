import Foundation
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
/// known there (an HTTP/1.0 request's expectation is ignored, as the RFC asks). Inbound only:
/// whether an earlier, pipelined request is still being answered (a refusal of ours must not
/// come between the parts of that answer) the connection's ``ConnectionGuard`` knows.
final class ExpectContinueHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let maximumBodyBytes: Int
    private let connectionGuard: ConnectionGuard
    /// After a refusal: the rest of what the client sends is dropped until the close.
    private var refused = false

    init(maximumBodyBytes: Int, connectionGuard: ConnectionGuard) {
        self.maximumBodyBytes = maximumBodyBytes
        self.connectionGuard = connectionGuard
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !refused else { return }
        // Most requests have no Expect: one look at the names, nothing split or allocated.
        guard case .head(let head) = unwrapInboundIn(data), head.headers.contains(name: "expect"),
              head.version.major > 1 || head.version.minor >= 1,
              head.headers[canonicalForm: "expect"].contains(where: { $0.lowercased() == "100-continue" }) else {
            return context.fireChannelRead(data)
        }
        // While an earlier, pipelined request is still being answered, nothing of ours may
        // come between the parts of that answer (a 1xx head in a chunked body ends its framing):
        // the request goes on without the interim answer, and the client sends its body when
        // its own wait is over, as before.
        guard connectionGuard.answersOwed == 0 else { return context.fireChannelRead(data) }
        let length = head.headers.first(name: "content-length").flatMap { Int($0.trimmingCharacters(in: .whitespaces)) }
        if let length, length > maximumBodyBytes {
            refused = true
            return refuse(context, version: head.version, length: length)
        }
        context.writeAndFlush(wrapOutboundOut(.head(HTTPResponseHead(version: head.version, status: .continue))), promise: nil)
        context.fireChannelRead(data)
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
