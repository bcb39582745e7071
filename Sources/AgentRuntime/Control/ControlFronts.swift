import AgentBase
import AgentCommands
import AgentLoop
import JSONSchema
import Logging

/// The supervisor's fronts: the control socket (opened when the supervisor runs), the command
/// layer the other fronts share (``CommandCenter``) and those fronts (HTTP, the dashboard;
/// started by the launcher). All close when the loop takes no more commands.
@LoopActor
public final class ControlFronts {
    /// Where the control socket goes (nil: no control socket).
    public var paths: AgentPaths?
    /// The control socket's server while the supervisor runs.
    private(set) var server: ControlServer?
    /// The command layer of the other fronts (made once, see
    /// ``Supervisor/makeCommandCenter(storePath:)``).
    var commandCenter: CommandCenter?
    /// The fronts started, stopped by ``close()``.
    public private(set) var started: [any AgentFront] = []

    init() {}

    /// Starts `front` and keeps it, to be stopped with the others.
    public func start(_ front: any AgentFront) throws {
        try front.start()
        started.append(front)
    }

    /// Opens the control socket when there are paths for it; a failure is logged and the agent
    /// runs without it.
    func openControlSocket(loop: EventLoop, limits: ControlLimits, logger: Logger,
                           handler: @escaping (JSONValue, _ partial: @escaping (JSONValue) -> Void, _ respond: @escaping (JSONValue) -> Void) -> Void) {
        guard let paths else { return }
        do {
            server = try ControlServer(paths: paths, loop: loop, limits: limits, logger: logger, handle: handler)
            logger.info("control socket: \(paths.socketPath)")
        } catch {
            logger.error("\(error); agent-control status/stop/reload will not reach this agent")
        }
    }

    /// Closes the control socket and the command layer, and stops every front started.
    public func close() {
        server?.close()
        server = nil
        commandCenter?.close()
        for front in started { front.stop() }
        started = []
    }
}
