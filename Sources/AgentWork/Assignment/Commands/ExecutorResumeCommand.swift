import AgentBase

/// `executor_resume`: a drained executor takes runs again.
package enum ExecutorResumeCommand: @preconcurrency ExecutorDrainingCommand {
    package static let name = "executor_resume"
    package static let summary = "Resumes a drained executor: it takes runs again."
    package static let routes: [CommandRoute] = [.post("/api/executors/{name}/resume")]
    package static let drains = false
}
