import AgentCore
import AgentLoop
import Logging

/// Events whose type holds a control character, refused where they are routed: a module
/// library's `emit` took any bytes (a program's `emit` line is refused by the worker), and
/// `flood\0secret` was kept as `flood` but routed whole; an escape reached terminals.
extension SupervisedProcess {
    /// Counts an event refused for its type, and logs it: the first, then at most one line
    /// every 10 s, with how many were refused meanwhile.
    @LoopActor
    package func refuseType(log logger: Logger) {
        eventsRefused += 1
        let now = EventLoop.now()
        guard eventsRefused == 1 || now - refusalLoggedAt >= 10 else { return }
        refusalLoggedAt = now
        let why = EventRouter.runtimeOnlyTypes.contains(lastEmittedTypeName)
            ? "of a type only the agent's chat delivers (the last \(lastEmittedTypeName)): a module's process may not pass for a person chatting"
            : "whose type holds control characters (the last \(TerminalText.shown(lastEmittedTypeName, keepingLines: false))); an event type is printable text: fix the module"
        logger.warning("refused \(eventsRefused) event(s) so far \(why)", metadata: ["process": "\(name)"])
    }
}
