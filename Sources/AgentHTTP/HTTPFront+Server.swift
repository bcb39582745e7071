import Hummingbird
import HummingbirdCore
import HummingbirdTLS
import Logging
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import ServiceLifecycle

extension HTTPFront {
    /// The API's listener and, with `"health_listen"`, the probes' listener, on `group`.
    func makeListeners(group: any EventLoopGroup, logger: Logger, api: ListenerStart, health: ListenerStart?) throws -> [any Service] {
        let run = ServerRun(responder: makeRouter().buildResponder(), dates: dates, logger: logger)
        // At most max_connections are served at once, the rest wait in the listen backlog.
        var listeners = [try run.build(
            makeServer(perClient: min(settings.maximumConnectionsPerClient, settings.maximumConnections)),
            configuration: .init(address: .hostname(settings.host, port: settings.port), serverName: nil,
                                 availableConnectionsDelegate: .maximum(settings.maximumConnections, logger: logger)),
            group: group, onServerRunning: { await api.running($0) })]
        if let health, let host = settings.healthHost, let port = settings.healthPort {
            var probes = run
            probes.onlyPaths = HealthRoutes.probePaths
            listeners.append(try probes.build(
                makeServer(perClient: Self.healthConnections),
                configuration: .init(address: .hostname(host, port: port), serverName: nil,
                                     availableConnectionsDelegate: .maximum(Self.healthConnections, logger: logger)),
                group: group, onServerRunning: { await health.running($0) }))
        }
        return listeners
    }

    /// HTTP/1.1, or HTTPS with the certificate and key of `"tls"`, each connection held to
    /// `perClient` connections per address and the head deadline (see ``ConnectionGuard``).
    func makeServer(perClient: Int) throws -> HTTPServerBuilder {
        // A client silent for idle_timeout between requests (or while a body arrives) is cut off.
        let idle = TimeAmount.milliseconds(Int64(min(max(settings.idleTimeout, 0.001), 86400) * 1000))
        let limits = ConnectionGuard.Limits(perClient: perClient, headerTimeout: .milliseconds(Int64(min(max(settings.headerTimeout, 0.1), 3600) * 1000)),
                                            headerSeconds: settings.headerTimeout, bodySeconds: min(max(settings.bodyTimeout, 0.1), 3600),
                                            maximumBodyBytes: settings.maximumBodyBytes)
        let counts = ClientConnectionCounts()
        let http1 = HTTPServerBuilder { responder in
            GuardedHTTP1Channel(responder: responder, idleTimeout: idle, limits: limits, counts: counts)
        }
        guard let tls = settings.tls else { return http1 }
        let certificates: [NIOSSLCertificate]
        let key: NIOSSLPrivateKey
        do {
            certificates = try NIOSSLCertificate.fromPEMFile(tls.certificate)
        } catch {
            throw HTTPFrontError("http: cannot read the certificate \(tls.certificate) (/http/tls/certificate): \(error)")
        }
        do {
            key = try NIOSSLPrivateKey(file: tls.key, format: .pem)
        } catch {
            throw HTTPFrontError("http: cannot read the private key \(tls.key) (/http/tls/key): \(error)")
        }
        guard !certificates.isEmpty else { throw HTTPFrontError("http: no certificate in \(tls.certificate) (/http/tls/certificate)") }
        let configuration = TLSConfiguration.makeServerConfiguration(certificateChain: certificates.map { .certificate($0) }, privateKey: .privateKey(key))
        do {
            return try .tls(http1, tlsConfiguration: configuration)
        } catch {
            throw HTTPFrontError("http: cannot set up TLS: \(error)")
        }
    }

}

/// How the front serves each request: what Hummingbird's `Application.run` does, without its
/// once-a-second date timer (the `Date` header is made on demand, see ``HTTPDateHeader``) and
/// without a request-id logger made for every request (the front logs only errors).
struct ServerRun: Sendable {
    let responder: RouterResponder<AgentRequestContext>
    let dates: HTTPDateHeader
    let logger: Logger
    /// The only paths answered (the health listener's); others get 404. Nil: every path.
    var onlyPaths: Set<String>? = nil

    /// The server, to be run on `group`'s threads.
    func build(_ server: HTTPServerBuilder, configuration: ServerConfiguration, group: any EventLoopGroup,
               onServerRunning: @escaping @Sendable (any Channel) async -> Void) throws -> any Service {
        let run = self
        return try server.buildServer(configuration: configuration, eventLoopGroup: group, logger: logger,
                                      responder: { request, writer, channel in
                                          try await run.respond(to: request, writer: writer, channel: channel)
                                      }, onServerRunning: onServerRunning)
    }

    func respond(to request: Request, writer: consuming ResponseWriter, channel: any Channel) async throws {
        let context = AgentRequestContext(source: .init(channel: channel, logger: logger))
        var response: Response
        // HEAD is served on every GET route: the GET's answer (status, headers, its
        // Content-Length) without its body, through the same middlewares as the GET.
        let isHead = request.method == .head
        var served = request
        if isHead {
            var head = request.head
            head.method = .get
            served = Request(head: head, body: request.body)
        }
        if let onlyPaths, !onlyPaths.contains(request.uri.path) {
            let list = onlyPaths.sorted().map { "GET \($0)" }.joined(separator: " and ")
            response = APIResponse.error(.notFound, code: "not_found", "this listener (http.health_listen) answers only \(list); the API is on http.listen")
        } else {
            do {
                response = try await responder.respond(to: served, context: context)
            } catch let error as HTTPParserError {
                // The connection answers 400 and closes.
                throw error
            } catch {
                // Not reached: JSONErrorMiddleware answers every error.
                response = Response(status: .internalServerError, body: .init())
            }
        }
        if isHead { response = response.createHeadResponse() }
        response.headers[.date] = dates.current
        do {
            try await writer.write(response: response.head, body: response.body)
        } catch is HTTPParserError {
            // Not a parse error of the request: a second answer must not be written.
            throw ResponseWriteFailed()
        }
    }

    struct ResponseWriteFailed: Error {}
}
