import AgentBase
import AgentCommands
import AgentCore
import AgentLoop
import Foundation
import JSONSchema
import Logging

/// The supervisor's fronts: the control socket (opened when the supervisor runs), the command
/// layer the other fronts share (``CommandCenter``) and those fronts (HTTP, the dashboard;
/// started by the launcher). All close when the loop takes no more commands; a front that
/// finishes starting after that is stopped at once, whether or not the loop turns again.
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
    /// What `agent-control console` exits with once the loop ends: 0, or 1 when a front could
    /// not start (see ``startBeside(_:inbox:logger:stopAgent:)``).
    package private(set) var exitStatus: Int32 = 0
    /// Whether fronts are being started on their thread (see ``startBeside(_:inbox:logger:stopAgent:)``).
    private(set) var starting = false
    /// Shared with the thread that starts fronts: once closed, it stops what it started itself
    /// (the loop may never turn again to take them: an embedded supervisor whose run ended).
    private let handoff = FrontHandoff()

    init() {}

    /// Whether ``close()`` has run: no front starts any more.
    var isClosed: Bool { handoff.isClosed }

    /// Starts `front` and keeps it, to be stopped with the others; refused once the fronts are
    /// closed (it would listen with nothing left to stop it).
    public func start(_ front: any AgentFront) throws {
        guard !handoff.isClosed else { throw ClosedError() }
        try front.start()
        started.append(front)
    }

    /// Starts `fronts` in order on a thread of their own, beside the first spawns: an HTTP
    /// server takes milliseconds to set up (its event loop, its routes, the wait until it
    /// listens) that the first worker need not wait for. Those started are kept, to be stopped
    /// with the others (at once when the fronts were closed meanwhile). One that cannot start
    /// (its port taken) stops the agent (`stopAgent`) with exit status 1, the processes started
    /// meanwhile stopped as at any stop.
    package func startBeside(_ fronts: [any AgentFront], inbox: LoopInbox, logger: Logger, stopAgent: @escaping @Sendable @LoopActor () -> Void) {
        guard !fronts.isEmpty, !handoff.isClosed else { return }
        starting = true
        nonisolated(unsafe) let list = fronts
        let handoff = handoff
        let refused = SystemThread.run("agent-fronts") { [self] in
            var failure: String?
            for front in list {
                do {
                    guard try handoff.start(front) else { break }
                } catch {
                    failure = "\(error)"
                    break
                }
            }
            inbox.post { [self] in
                starting = false
                started.append(contentsOf: handoff.takeStarted())
                guard !handoff.isClosed else { return }
                frontsStarted(failure: failure, logger: logger, stopAgent: stopAgent)
            }
        }
        if let refused {
            // Told after this turn, as a front's own failure is: the start goes on to its end first.
            let failure = "cannot start the fronts (\(fronts.map { "\(type(of: $0))" }.joined(separator: ", "))): \(refused)"
            inbox.post { [self] in
                starting = false
                frontsStarted(failure: failure, logger: logger, stopAgent: stopAgent)
            }
        }
    }

    private func frontsStarted(failure: String?, logger: Logger, stopAgent: @LoopActor () -> Void) {
        guard let failure else {
            let address = started.compactMap(\.address).first
            return logger.info("\(AgentLauncher.dashboardLine(address)); from another terminal: agent-control status, agent-control chat")
        }
        AgentLauncher.printError("\(failure)\nthe agent stops; the processes it started meanwhile are stopped")
        exitStatus = AgentLauncher.ExitCode.failure
        stopAgent()
    }

    /// Opens the control socket when there are paths for it; a failure is logged and the agent
    /// runs without it. Each request is checked against the registry like an HTTP request (the
    /// same refusal, the same pointer), then executed (`execute`) as the socket's operator,
    /// named by the peer's OS user. A request with `"stream": true` (a chat) gets its answer's
    /// pieces as lines `{"partial": TEXT}` before the answer.
    func openControlSocket(loop: EventLoop, limits: ControlLimits, logger: Logger,
                           execute: @escaping (CheckedRequest, CommandCenter.Caller, _ respond: @escaping (JSONValue) -> Void) -> Void) {
        guard let paths else { return }
        do {
            server = try ControlServer(paths: paths, loop: loop, limits: limits, logger: logger) { request, peer, partial, respond in
                Self.control(request, peer: peer, partial: partial, respond: respond, execute: execute)
            }
            logger.info("control socket: \(paths.socketPath)")
        } catch {
            logger.error("\(error); agent-control status/stop/reload will not reach this agent")
        }
    }

    /// One control-socket request (see ``openControlSocket(loop:limits:logger:execute:)``).
    static func control(_ request: Result<CheckedRequest, CommandError>, peer: String?, partial: @escaping (JSONValue) -> Void, respond: @escaping (JSONValue) -> Void,
                        execute: (CheckedRequest, CommandCenter.Caller, _ respond: @escaping (JSONValue) -> Void) -> Void) {
        switch request {
        case .success(let checked):
            var caller = CommandCenter.Caller(front: "control", peerUser: peer)
            if checked.json["stream"] == .bool(true) {
                // The relay calls it on the loop, where the control server lives.
                let write = LoopOwned(partial)
                caller.partial = { text in LoopActor.assumeIsolated { write.value(["partial": .string(text)]) } }
            }
            execute(checked, caller, respond)
        case .failure(let refusal): respond(refusal.json)
        }
    }

    /// Closes the control socket and the command layer, and stops every front started (and
    /// any that finishes starting later).
    public func close() {
        server?.close()
        server = nil
        commandCenter?.close()
        for front in started + handoff.close() { front.stop() }
        started = []
    }

    /// The refusal of ``start(_:)`` once the fronts are closed.
    public struct ClosedError: Error, CustomStringConvertible {
        public var description: String { "the agent's fronts are closed (its loop has ended); a front cannot start now — start it before the supervisor stops" }
    }
}
