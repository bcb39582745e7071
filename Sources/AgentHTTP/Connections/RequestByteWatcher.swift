import NIOCore

/// Ahead of the HTTP decoder: tells ``ConnectionGuard`` when bytes of a request head arrive,
/// which the decoder's parts alone cannot (a head says nothing until it is complete).
///
/// Whether a read's bytes ended exactly with a request, or a next head began after it, is
/// learnt by handing the decoder the read in two pieces — all but the last byte, then the
/// last — and seeing whether a request ended with the last piece. No copy is made.
final class RequestByteWatcher: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    private let connectionGuard: ConnectionGuard

    init(_ connectionGuard: ConnectionGuard) { self.connectionGuard = connectionGuard }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var buffer = unwrapInboundIn(data)
        guard buffer.readableBytes > 0 else { return context.fireChannelRead(data) }
        if buffer.readableBytes > 1, let allButLast = buffer.readSlice(length: buffer.readableBytes - 1) {
            context.fireChannelRead(wrapInboundOut(allButLast))
        }
        let before = connectionGuard.requestsRead
        context.fireChannelRead(wrapInboundOut(buffer))
        connectionGuard.bytesRead(endedWithARequest: connectionGuard.requestsRead > before)
    }
}
