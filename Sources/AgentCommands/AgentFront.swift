import Logging

/// A way to reach the agent's commands from outside other than the control socket: the HTTP
/// API and dashboard. The launcher starts each front before the processes start and the
/// supervisor stops them once its loop takes no more commands.
public protocol AgentFront: AnyObject {
    /// Starts serving; throws, saying why, if it cannot (the agent then does not start).
    func start() throws
    /// Stops serving and waits until it has.
    func stop()
    /// Where a person reaches it once started (`http://127.0.0.1:8080/`), for the start line.
    var address: String? { get }
}

/// What a front is given: the command layer, the `"http"` settings the agent started with (nil:
/// none), a logger.
public struct FrontContext: Sendable {
    public var commands: CommandCenter
    public var http: HTTPSettings?
    /// The HTTP tokens and users in force (a reload replaces them; `http`'s are those of the start).
    public var credentials: HTTPCredentials
    public var logger: Logger

    public init(commands: CommandCenter, http: HTTPSettings?, credentials: HTTPCredentials? = nil, logger: Logger) {
        self.commands = commands
        self.http = http
        self.credentials = credentials ?? HTTPCredentials(http)
        self.logger = logger
    }
}

/// Makes a front from the settings, or nil when the settings do not ask for it.
public typealias FrontFactory = @Sendable (FrontContext) throws -> (any AgentFront)?
