import AgentBase
import AgentSupervision
import JSONSchema

/// What the supervision commands run on: the supervisor, which the root (AgentRuntime)
/// composes. The commands are declared here, below the root, so that every front finds them
/// in the one registry; the root only conforms.
package protocol SupervisionCommandHost: AnyObject {
    /// A snapshot of the agent (`status`, `metrics`, `readiness`).
    func takeSnapshot() -> AgentSnapshot
    /// Stops every process and the agent.
    func stopAgent()
    /// Starts, stops or restarts a process (every replica of one named without #N).
    func controlProcess(_ request: ProcessCommand.Request) -> Result<ProcessCommand.Answer, CommandError>
    /// A process's recent log.
    func logs(_ request: ProcessLog.Request) -> Result<LogsCommand.Answer, CommandError>
    /// Versions, paths, figures and limits.
    func diagnostics() -> DiagnosticsCommand.Answer
    /// Re-reads the settings and applies the differences; answers on the loop.
    func reloadSettings(respond: @escaping (Result<ReloadCommand.Answer, CommandError>) -> Void)
}
