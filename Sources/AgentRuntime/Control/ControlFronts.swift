import AgentBase
import AgentCommands
import AgentLoop
import Foundation
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

    /// Whether fronts are being started on their thread (see ``startBeside(_:inbox:then:)``).
    private(set) var starting = false
    private var closed = false

    /// Starts `front` and keeps it, to be stopped with the others.
    public func start(_ front: any AgentFront) throws {
        try front.start()
        started.append(front)
    }

    /// Starts `fronts` in order on a thread of their own, beside the first spawns: an HTTP
    /// server takes milliseconds to set up (its event loop, its routes, the wait until it
    /// listens) that the first worker need not wait for. `then` runs on the loop with why the
    /// first that could not start did not (nil: all started); those started are kept, to be
    /// stopped with the others (at once when the fronts were closed meanwhile).
    func startBeside(_ fronts: [any AgentFront], inbox: LoopInbox, then: @escaping @Sendable @LoopActor (String?) -> Void) {
        guard !fronts.isEmpty else { return }
        starting = true
        nonisolated(unsafe) let list = fronts
        Thread.detachNewThread { [self] in
            var done: [any AgentFront] = []
            var failure: String?
            for front in list {
                do {
                    try front.start()
                    done.append(front)
                } catch {
                    failure = "\(error)"
                    break
                }
            }
            nonisolated(unsafe) let kept = done
            inbox.post { [self] in
                starting = false
                guard !closed else { return kept.forEach { $0.stop() } }
                started.append(contentsOf: kept)
                then(failure)
            }
        }
    }

    /// Opens the control socket when there are paths for it; a failure is logged and the agent
    /// runs without it.
    func openControlSocket(loop: EventLoop, limits: ControlLimits, logger: Logger,
                           handler: @escaping (JSONValue, _ peer: String?, _ partial: @escaping (JSONValue) -> Void, _ respond: @escaping (JSONValue) -> Void) -> Void) {
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
        closed = true
    }
}
