import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import NIOHTTP1

/// Hummingbird's HTTP/1.1 child channel with a ``ConnectionGuard`` behind the decoder and its
/// ``RequestByteWatcher`` ahead of it (behind TLS when there is TLS: the watcher sees the
/// request's bytes, not the record layer's), and the ``ExpectContinueHandler`` right behind
/// the decoder.
struct GuardedHTTP1Channel: ServerChildChannel, HTTPChannelHandler {
    typealias Value = HTTP1Channel.Value

    let responder: HTTPChannelHandler.Responder
    let base: HTTP1Channel
    let limits: ConnectionGuard.Limits
    let counts: ClientConnectionCounts

    init(responder: @escaping HTTPChannelHandler.Responder, idleTimeout: TimeAmount, limits: ConnectionGuard.Limits, counts: ClientConnectionCounts) {
        self.responder = responder
        base = HTTP1Channel(responder: responder, configuration: .init(idleTimeout: idleTimeout))
        self.limits = limits
        self.counts = counts
    }

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        let (limits, counts) = (limits, counts)
        return base.setup(channel: channel, logger: logger).assumeIsolated().flatMapThrowing { value in
            let pipeline = channel.pipeline.syncOperations
            let connectionGuard = ConnectionGuard(counts: counts, limits: limits, logger: logger)
            let decoder = try pipeline.handler(type: ByteToMessageHandler<HTTPRequestDecoder>.self)
            try pipeline.addHandler(RequestByteWatcher(connectionGuard), position: .before(decoder))
            try pipeline.addHandler(ExpectContinueHandler(maximumBodyBytes: limits.maximumBodyBytes, connectionGuard: connectionGuard), position: .after(decoder))
            let state = try pipeline.handler(type: HTTPConnectionStateHandler.self)
            try pipeline.addHandler(connectionGuard, position: .before(state))
            return value
        }.nonisolated()
    }

    func handle(value: Value, logger: Logger) async {
        await handleHTTP(asyncChannel: value, logger: logger)
    }
}
