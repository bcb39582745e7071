import AgentRuntime
import Foundation
import Hummingbird
import Logging
import NIOCore
import Synchronization

/// The HTTP front: the API (one route per command of the command layer), health and, later,
/// the dashboard and metrics, served by Hummingbird on its own threads in the supervisor's
/// process. Handlers only post commands to the supervisor's loop and await the answers (see
/// ``CommandCenter``); no client can block the loop.
public final class HTTPFront: AgentFront, Sendable {
    /// Makes the front when the settings have `"http"`.
    public static let factory: FrontFactory = { context in
        guard let settings = context.settings.http else { return nil }
        return HTTPFront(context: context, settings: settings)
    }

    let context: FrontContext
    let settings: HTTPSettings
    private let state = Mutex<(task: Task<Void, Never>?, port: Int?)>((nil, nil))
    private let finished = DispatchSemaphore(value: 0)

    public init(context: FrontContext, settings: HTTPSettings) {
        self.context = context
        self.settings = settings
    }

    /// The port it listens on (the one the system chose for `:0`), once started.
    public var port: Int? { state.withLock { $0.port } }

    /// The routes: health first (no credentials for `/livez`), then the API.
    func makeRouter() -> Router<AgentRequestContext> {
        let router = Router(context: AgentRequestContext.self)
        router.middlewares.add(JSONErrorMiddleware())
        HealthRoutes(commands: context.commands).register(on: router)
        CommandRoutes(commands: context.commands, maximumBodyBytes: settings.maximumBodyBytes).register(on: router)
        return router
    }

    public func start() throws {
        let started = DispatchSemaphore(value: 0)
        let outcome = LockedValue<Result<Int, any Error>?>(nil)
        let address = settings.host.contains(":") ? "[\(settings.host)]:\(settings.port)" : "\(settings.host):\(settings.port)"
        var logger = context.logger
        logger.logLevel = max(logger.logLevel, .notice)
        let app = Application(
            router: makeRouter(),
            server: .http1(configuration: .init(idleTimeout: .seconds(60))),
            configuration: .init(address: .hostname(settings.host, port: settings.port), serverName: nil),
            onServerRunning: { channel in
                outcome.withLock { $0 = .success(channel.localAddress?.port ?? 0) }
                started.signal()
            },
            logger: logger)
        let finished = finished
        let task = Task.detached {
            do {
                try await app.run()
            } catch {
                outcome.withLock { if $0 == nil { $0 = .failure(error) } }
                started.signal()
            }
            finished.signal()
        }
        state.withLock { $0.task = task }
        guard started.wait(timeout: .now() + 30) == .success else {
            task.cancel()
            throw HTTPFrontError("http: could not listen on \(address) within 30 s")
        }
        switch outcome.withLock({ $0 }) {
        case .success(let port)?:
            state.withLock { $0.port = port }
            let shown = settings.host.contains(":") ? "[\(settings.host)]:\(port)" : "\(settings.host):\(port)"
            context.logger.notice("http: listening on http://\(shown)")
        case .failure(let error)?:
            state.withLock { $0.task = nil }
            throw HTTPFrontError("http: cannot listen on \(address) (/http/listen): \(error)")
        case nil:
            throw HTTPFrontError("http: could not listen on \(address)")
        }
    }

    public func stop() {
        guard let task = state.withLock({ state in defer { state.task = nil }; return state.task }) else { return }
        task.cancel()
        _ = finished.wait(timeout: .now() + 10)
    }
}

/// Why the HTTP front could not start.
public struct HTTPFrontError: Error, CustomStringConvertible {
    public var description: String
    init(_ description: String) { self.description = description }
}
