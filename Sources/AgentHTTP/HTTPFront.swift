import AgentCommands
import AgentCore
import Foundation
import Hummingbird
import HummingbirdCore
import HummingbirdTLS
import Logging
import NIOSSL
import NIOCore
import NIOPosix
import ServiceLifecycle
import Synchronization

/// The HTTP front: the API (one route per command of the command layer), health, metrics and,
/// later, the dashboard, served by Hummingbird on its own threads in the supervisor's
/// process. Handlers only post commands to the supervisor's loop and await the answers (see
/// ``CommandCenter``); no client can block the loop.
public final class HTTPFront: AgentFront, Sendable {
    /// Makes the front when the settings have `"http"`.
    public static let factory: FrontFactory = { context in
        guard let settings = context.http else { return nil }
        return HTTPFront(context: context, settings: settings)
    }

    let context: FrontContext
    let settings: HTTPSettings
    /// `GET /metrics` and the request counters.
    let exporter = PrometheusExporter()
    private let state = Mutex<(task: Task<Void, Never>?, group: (any EventLoop)?, executor: EventLoopTaskExecutor?, port: Int?,
                               services: ServiceGroup?, healthPort: Int?)>((nil, nil, nil, nil, nil, nil))
    /// The `Date` header of the answers.
    let dates = HTTPDateHeader()
    private let finished = DispatchSemaphore(value: 0)
    /// Login sessions of browsers.
    let sessions: SessionTable
    /// Failed logins per address and user.
    let loginLimiter: LoginRateLimiter
    /// Bcrypt checks, on threads of their own.
    let passwords = PasswordHashing()
    /// The open `?follow` streams.
    let streams = StreamSlots(limit: HTTPFront.maximumStreams)

    public init(context: FrontContext, settings: HTTPSettings) {
        self.context = context
        self.settings = settings
        sessions = SessionTable(ttl: settings.sessionTTL)
        loginLimiter = LoginRateLimiter(failures: settings.loginFailures, window: settings.loginWindow)
    }


    /// The port it listens on (the one the system chose for `:0`), once started.
    public var port: Int? { state.withLock { $0.port } }

    /// The port of the health listener (`"health_listen"`), once started.
    public var healthPort: Int? { state.withLock { $0.healthPort } }

    /// The dashboard's address once started: the scheme, the host and the port it listens on.
    public var address: String? {
        guard let port else { return nil }
        let host = settings.host.contains(":") ? "[\(settings.host)]" : settings.host
        return "\(settings.tls == nil ? "http" : "https")://\(host):\(port)/"
    }

    /// The routes that are not commands, for the OpenAPI document and 405 answers: a route
    /// added to the router is declared here too.
    static let documentedRoutes: [RouteDescription] = HealthRoutes.documentation + LoginRoutes.documentation + OpenAPIRoutes.documentation
        + MCPRoutes.documentation

    /// The most `?follow` streams open at once (more get 503).
    static let maximumStreams = 32

    /// The routes: health first (no credentials for `/livez`), then the API. A request with a
    /// big body moves to its own thread (``BigBodyLane``). Every request passes the
    /// authenticators (bearer token, session cookie) and the access policy (who may do what,
    /// CSRF) before its route; then its shape (a method the route takes, no body on a GET).
    func makeRouter() -> Router<AgentRequestContext> {
        let router = Router(context: AgentRequestContext.self)
        router.middlewares.add(BigBodyLane())
        router.middlewares.add(HTTPMetricsMiddleware(exporter: exporter))
        router.middlewares.add(JSONErrorMiddleware())
        let csrf = CSRFProtection(sessions: sessions, secure: settings.tls != nil, maximumBodyBytes: settings.maximumBodyBytes)
        router.middlewares.add(BearerTokens(credentials: context.credentials))
        router.middlewares.add(SessionAuthenticator(sessions: sessions, credentials: context.credentials))
        router.middlewares.add(AccessPolicy(csrf: csrf, commands: context.commands))
        router.middlewares.add(RequestShapeMiddleware(routes: RouteTable(commands: CommandRegistry.standard.declarations, routes: Self.documentedRoutes)))
        LoginRoutes(credentials: context.credentials, sessions: sessions, limiter: loginLimiter, passwords: passwords, csrf: csrf,
                    commands: context.commands, logger: context.logger).register(on: router)
        HealthRoutes(commands: context.commands, readiness: settings.readiness).register(on: router)
        MetricsRoutes(commands: context.commands, exporter: exporter).register(on: router)
        let document = OpenAPIDocument.make(commands: CommandRegistry.standard.declarations, routes: Self.documentedRoutes)
        OpenAPIRoutes(document: document).register(on: router)
        CommandRoutes(commands: context.commands, maximumBodyBytes: settings.maximumBodyBytes, streams: streams, credentials: context.credentials,
                      sessions: sessions).register(on: router)
        DashboardRoutes(commands: context.commands, maximumBodyBytes: settings.maximumBodyBytes).register(on: router)
        MCPRoutes(commands: context.commands, maximumBodyBytes: settings.maximumBodyBytes).register(on: router)
        DocsRoutes(library: DocsLibrary.locate(), document: document).register(on: router)
        return router
    }

    public func start() throws {
        let address = settings.host.contains(":") ? "[\(settings.host)]:\(settings.port)" : "\(settings.host):\(settings.port)"
        var logger = context.logger
        logger.logLevel = max(logger.logLevel, .notice)
        // One event loop thread: an agent's API is a few clients, and each extra thread is one
        // more hop and wake-up per request on a 2-core machine. Started by us: NIO stops the
        // process when the system refuses it a thread (`ulimit -u`, a service's TasksMax).
        let group: any EventLoop
        switch SystemThread.handingBack("agent-http-loop", { handBack in MultiThreadedEventLoopGroup.withCurrentThreadAsEventLoop(handBack) }) {
        case .success(let loop): group = loop
        case .failure(let refusal): throw HTTPFrontError("http: cannot start: \(refusal)")
        }
        let api = ListenerStart(), health = settings.healthPort == nil ? nil : ListenerStart()
        let listeners: [any Service]
        do {
            listeners = try makeListeners(group: group, logger: logger, api: api, health: health)
        } catch let error as HTTPFrontError {
            try? group.syncShutdownGracefully()
            throw error
        } catch {
            try? group.syncShutdownGracefully()
            throw HTTPFrontError("http: cannot set up the server on \(address): \(error)")
        }
        let finished = finished
        let loop = group.next()
        let executor = EventLoopTaskExecutor(loop)
        // A request asks the loop for its snapshot after the other handlers of this tick ran:
        // one snapshot for all the requests read together.
        context.commands.deferSnapshotRequests { ask in
            // Not once the front has stopped: its loop, shutting down, takes no more work.
            if loop.inEventLoop, !executor.isClosed { loop.execute(ask) } else { ask() }
        }
        // In a service group so that it can be shut down gracefully (see ``stop()``).
        let services = ServiceGroup(configuration: .init(services: listeners, logger: logger))
        let task = Task.detached {
            do {
                // The connections' tasks are children of the server's: they run on its loop.
                try await withTaskExecutorPreference(executor) { try await services.run() }
            } catch {
                api.fail(error)
                health?.fail(error)
            }
            finished.signal()
        }
        state.withLock { $0.task = task; $0.group = group; $0.executor = executor; $0.services = services }
        let port = try awaitListening(api, "", settings.host, pointer: "/http/listen")
        if let warning = DescriptorBudget.warning(maximumConnections: settings.maximumConnections,
                                                  health: health == nil ? 0 : Self.healthConnections) {
            context.logger.warning("\(warning)")
        }
        state.withLock { $0.port = port }
        if let health, let host = settings.healthHost {
            let port = try awaitListening(health, "health checks (GET /livez, GET /readyz) ", host, pointer: "/http/health_listen")
            state.withLock { $0.healthPort = port }
        }
    }

    /// The connections of the health listener (`"health_listen"`): probes are few.
    static let healthConnections = 16

    /// Waits for a listener to listen: its port, logged; or the agent's start fails.
    private func awaitListening(_ listener: ListenerStart, _ what: String, _ host: String, pointer: String) throws -> Int {
        let shown = { (port: Int) in host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
        switch listener.wait(seconds: 30) {
        case .success(let port)?:
            context.logger.notice("http: \(what)listening on \(settings.tls == nil ? "http" : "https")://\(shown(port))")
            return port
        case .failure(let error)?:
            stop()
            throw HTTPFrontError("http: cannot listen on \(host) (\(pointer)): \(error)")
        case nil:
            stop()
            throw HTTPFrontError("http: could not listen on \(host) (\(pointer)) within 30 s")
        }
    }

    /// How long a stop waits for the connections to end before it cuts them (seconds).
    static let stopGrace = 2.0

    public func stop() {
        let (task, group, executor, services) = state.withLock { state in
            defer { (state.task, state.group, state.executor, state.services) = (nil, nil, nil, nil) }
            return (state.task, state.group, state.executor, state.services)
        }
        defer {
            // Tasks resumed after this (a command answered "the agent is stopping") run on the
            // global pool: the event loop is going away.
            executor?.close()
            try? group?.syncShutdownGracefully()
        }
        guard let task else { return }
        // Streams end at their next poll with a last `end` event; their connections then close
        // with the server instead of being cut.
        streams.close()
        let deadline = DispatchTime.now() + 2
        while streams.open > 0, DispatchTime.now() < deadline { usleep(10_000) }
        // Gracefully first: the server stops accepting and serves every connection it accepted.
        // Cancelled at once, a connection accepted but not yet taken by the server's loop was
        // dropped unserved, and NIO traps on that (`Deinited NIOAsyncWriter without calling
        // finish()`, apple/swift-nio#2637): the agent died of SIGILL when stopped during a
        // flood of connections. Connections still open after the grace are cut.
        if let services { Task.detached { await services.triggerGracefulShutdown() } }
        if finished.wait(timeout: .now() + Self.stopGrace) == .timedOut {
            task.cancel()
            _ = finished.wait(timeout: .now() + 10)
        }
    }
}

/// Why the HTTP front could not start.
public struct HTTPFrontError: Error, CustomStringConvertible {
    public var description: String
    init(_ description: String) { self.description = description }
}
