import AgentLoop
import AgentSupervision
import JSONSchema
import Logging

/// What ``ModuleTaskRunner`` needs from the process supervisor to run executor workers: start
/// and stop them, queue their frames, and the loop they live on. The supervisor conforms; the
/// work layer never holds the supervisor itself (so the compiler keeps the arrow pointing down).
///
/// Loop thread only.
package protocol ExecutorHost: AnyObject {
    /// The loop every call is made on (timers, deferred work).
    var loop: EventLoop { get }
    var logger: Logger { get }
    /// Whether the agent is stopping (no executor is started then).
    var isStopping: Bool { get }
    /// Starts an executor worker running `module`'s task handler for `type`, shown as `name`;
    /// `stopTimeout` is what its handlers get to end when stopped, then SIGKILL.
    func startExecutor(name: String, module: ModuleLocation, type: String, settings: JSONObject, stopTimeout: Double) -> SupervisedProcess
    /// Forgets an executor whose worker is gone.
    func removeExecutor(_ process: SupervisedProcess)
    /// Asks a worker to stop (stop frame, SIGTERM, then SIGKILL).
    func stop(_ process: SupervisedProcess)
    /// Kills a worker's process group, noting why.
    func kill(_ process: SupervisedProcess, reason: String)
    /// Queues a worker for the turn's write.
    func markDirty(_ process: SupervisedProcess)
    /// Writes the queued frames now.
    func flushDirty()
}
