import AgentBase

/// `executor_drain`: the executor finishes the runs it has and takes nothing new.
package enum ExecutorDrainCommand: @preconcurrency ExecutorDrainingCommand {
    package static let name = "executor_drain"
    package static let summary = "Drains an executor: it finishes the runs it has and takes nothing new (kept across restarts) until resumed."
    package static let routes: [CommandRoute] = [.post("/api/executors/{name}/drain")]
    package static let drains = true
}
