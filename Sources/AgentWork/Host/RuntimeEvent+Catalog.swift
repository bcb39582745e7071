
/// Every event type the runtime emits itself, by its source. A workflow's `publish` step and
/// the modules emit types of their own choosing; those are not here.
extension RuntimeEvent {
    private static let time = "string (ISO 8601 time)"

    // MARK: Payloads

    public static let taskRun = Payload("task run", [
        Member("run_id", "string", "The run's id."),
        Member("task", "string", "The task's name."),
        Member("attempt", "integer", "The attempt's number, from 1 (0 while a run never started)."),
        Member("status", "string", "The run's status now: " + TaskRun.Status.allCases.map(\.rawValue).joined(separator: ", ") + "."),
        Member("error", "string", always: false, "Why the run failed, was cancelled or is retried (not on queued or running)."),
        Member("exit_code", "integer", always: false, "A command task's exit status (once it ended)."),
        Member("next_attempt_at", time, always: false, "When a retrying run's next attempt is due."),
        Member("executor", "string", always: false, "The executor that runs it (with `assignment`)."),
    ])
    public static let taskAssignment = Payload("task assignment", [
        Member("run_id", "string", "The run's id."),
        Member("task", "string", "The task's name."),
        Member("executor", "string", "The executor chosen."),
        Member("strategy", "string", "How it was chosen: the assignment strategy's name, or `manual` (`task assign`)."),
        Member("priority", "string", always: false, "The run's priority (chosen by the strategy only)."),
        Member("attempt", "integer", always: false, "The attempt it is assigned for (chosen by the strategy only)."),
        Member("from", "string", always: false, "The executor it had before (task.reassigned)."),
        Member("user", "string", always: false, "The executor's `user`, when it has one."),
        Member("role", "string", always: false, "The executor's `role`, when it has one."),
    ])
    public static let executorChange = Payload("executor", [Member("executor", "string", "The executor's name.")])
    public static let strategyChange = Payload("assignment strategy", [
        Member("strategy", "string", "The strategy now chosen."),
        Member("task", "string", always: false, "The task it is chosen for (absent: every task without its own)."),
    ])
    public static let cascade = Payload("cascade stopped", [
        Member("task", "string", always: false, "The task not run (task.cascade_stopped)."),
        Member("workflow", "string", always: false, "The workflow not started (workflow.cascade_stopped)."),
        Member("event_type", "string", "The type of the event that would have triggered it."),
        Member("source", "string", "That event's source."),
        Member("depth", "integer", "How many runs deep the event comes, each started by an event of the one before."),
        Member("limit", "integer", "The deepest chain allowed."),
    ])
    public static let scheduleFire = Payload("schedule", [
        Member("schedule", "string", "The schedule's name."),
        Member("count", "integer", "How many fire times the event stands for (several missed ones are one event)."),
        Member("planned", time, always: false, "The fire time (the last one, when several)."),
        Member("first_planned", time, always: false, "The first of several fire times."),
        Member("run_id", "string", always: false, "The run requested (schedule.fired)."),
        Member("reason", "string", always: false, "Why the fire times were missed, skipped or wait."),
        Member("task", "string", always: false, "The task the schedule runs."),
        Member("workflow", "string", always: false, "The workflow the schedule starts."),
    ])
    public static let workflowStart = Payload("workflow started", [
        Member("run_id", "string", "The workflow run's id."),
        Member("workflow", "string", "The workflow's name."),
        Member("version", "string", "The definition's version the run follows."),
    ])
    public static let workflowEnd = Payload("workflow ended", [
        Member("run_id", "string", "The workflow run's id."),
        Member("workflow", "string", "The workflow's name."),
        Member("status", "string", "How it ended: succeeded, failed or cancelled."),
        Member("error", "string", always: false, "Why it failed or who cancelled it."),
    ])
    public static let approval = Payload("approval requested", [
        Member("run_id", "string", "The workflow run's id."),
        Member("workflow", "string", "The workflow's name."),
        Member("step", "string", "The approval step's id."),
        Member("approvers", "array of string", "Who may answer (roles or users); empty: any admin."),
        Member("prompt", "string", "The question asked, its references resolved."),
    ])
    public static let notification = Payload("task notification", [
        Member("event", "string", "What happened: failure, retry or success."),
        Member("task", "string", "The task's name."),
        Member("run_id", "string", "The run's id."),
        Member("attempt", "integer", "The attempt that ended."),
        Member("max_attempts", "integer", "The attempts the run may have (its retries, plus one per interruption)."),
        Member("status", "string", "How the attempt ended: succeeded, failed, timed_out or interrupted."),
        Member("will_retry", "boolean", "Whether another attempt follows."),
        Member("time", time, "When the attempt ended."),
        Member("agent", "string", "The agent's name (its folder's)."),
        Member("host", "string", "The host's name."),
        Member("error", "string", always: false, "Why the attempt failed."),
        Member("exit_code", "integer", always: false, "A command task's exit status."),
        Member("signal", "string", always: false, "The signal that ended a command task."),
        Member("stderr_tail", "string", always: false, "The end of a command task's standard error."),
    ])
    public static let chat = Payload("chat message", [
        Member("id", "string", "The message's id; the reply names it."),
        Member("conversation", "string", "The conversation (`default` when none was given)."),
        Member("text", "string", "What the person wrote."),
        Member("processes", "array of object", "Every process with its state, as `status` lists them."),
        Member("context", "object", always: false, "What the caller added (`chat --context`), with the sender's `user` and `preferences` set by the agent."),
        Member("adapter", "string", always: false, "The one logic adapter asked (`chat --adapter`)."),
        Member("purpose", "string", always: false, "`summary`: the agent asks the named `llm` adapter to sum up the transcript in `text` (`chat_summary`)."),
        Member("caller", "object", "Who sent it, as the front authenticated them: `{\"front\", \"user\", \"role\"}` (a language model's tool calls run as them)."),
        Member("deadline", "number", "When the sender stops waiting (30 s after it was sent), in seconds on this machine's CLOCK_MONOTONIC: the chatbot does not answer a message still queued then, and gives its adapters no longer."),
    ])

    // MARK: Types

    public static let taskQueued = RuntimeEvent("task.queued", source: "tasks", "A run was requested, assigned by hand or put back in the queue.", taskRun)
    public static let taskStarted = RuntimeEvent("task.started", source: "tasks", "An attempt of a run started.", taskRun)
    public static let taskRetrying = RuntimeEvent("task.retrying", source: "tasks", "An attempt failed or timed out and the run is tried again later.", taskRun)
    public static let taskInterrupted = RuntimeEvent("task.interrupted", source: "tasks", "The agent stopped while an attempt ran; the run goes on at the next start.", taskRun)
    public static let taskSucceeded = RuntimeEvent("task.succeeded", source: "tasks", "A run ended well.", taskRun)
    public static let taskFailed = RuntimeEvent("task.failed", source: "tasks", "A run ended failed (its last attempt failed, or its task is gone).", taskRun)
    public static let taskTimedOut = RuntimeEvent("task.timed_out", source: "tasks", "A run's last attempt went over its timeout.", taskRun)
    public static let taskCancelled = RuntimeEvent("task.cancelled", source: "tasks", "A run was cancelled.", taskRun)
    public static let taskAbandoned = RuntimeEvent("task.abandoned", source: "tasks", "A run was interrupted more often than its task's max_interruptions.", taskRun)
    public static let taskAssigned = RuntimeEvent("task.assigned", source: "tasks", "A run was given to an executor.", taskAssignment)
    public static let taskReassigned = RuntimeEvent("task.reassigned", source: "tasks", "A run moved to another executor (a retry elsewhere, or `task assign`).", taskAssignment)
    public static let executorDraining = RuntimeEvent("executor.draining", source: "tasks", "An executor takes no new runs (`executor drain`).", executorChange)
    public static let executorResumed = RuntimeEvent("executor.resumed", source: "tasks", "A drained executor takes runs again.", executorChange)
    public static let assignmentStrategy = RuntimeEvent("assignment.strategy", source: "tasks", "The assignment strategy was changed (`task set-strategy`).", strategyChange)
    public static let taskNotification = RuntimeEvent("task.notification", source: "tasks", "A run's attempt ended as a task's `notify` asks to be told: to the outputs only (`notify.outputs`), not routed.", notification)
    public static let taskCascadeStopped = RuntimeEvent("task.cascade_stopped", source: "tasks", "An event would have started a run too many triggers deep; the run is not started.", cascade)

    public static let scheduleFired = RuntimeEvent("schedule.fired", source: "schedules", "A schedule requested a run.", scheduleFire)
    public static let scheduleMissed = RuntimeEvent("schedule.missed", source: "schedules", "Fire times were not run: the agent was down or late, or the clock jumped.", scheduleFire)
    public static let scheduleSkipped = RuntimeEvent("schedule.skipped", source: "schedules", "Fire times were skipped: the previous run still going, or the schedule paused.", scheduleFire)
    public static let scheduleWaiting = RuntimeEvent("schedule.waiting", source: "schedules", "A fire waits for the previous run to end (`overlap: queue`).", scheduleFire)

    public static let workflowStarted = RuntimeEvent("workflow.started", source: "workflows", "A workflow run started (or resumed after a change of its definition).", workflowStart)
    public static let workflowSucceeded = RuntimeEvent("workflow.succeeded", source: "workflows", "A workflow run ended well.", workflowEnd)
    public static let workflowFailed = RuntimeEvent("workflow.failed", source: "workflows", "A workflow run failed.", workflowEnd)
    public static let workflowCancelled = RuntimeEvent("workflow.cancelled", source: "workflows", "A workflow run was cancelled.", workflowEnd)
    public static let workflowApprovalRequested = RuntimeEvent("workflow.approval_requested", source: "workflows", "A step waits for a person's approval.", approval)
    public static let workflowCascadeStopped = RuntimeEvent("workflow.cascade_stopped", source: "workflows", "An event would have started a run too many triggers deep; the run is not started.", cascade)

    public static let chatMessage = RuntimeEvent("chat.message", source: "control", "A chat message, delivered to the chatbot process only (`chat`, POST /api/chat).", chat)

    /// Every type, in the order of the reference.
    public static let all: [RuntimeEvent] = [
        taskQueued, taskStarted, taskRetrying, taskInterrupted, taskSucceeded, taskFailed, taskTimedOut, taskCancelled, taskAbandoned,
        taskAssigned, taskReassigned, executorDraining, executorResumed, assignmentStrategy, taskNotification, taskCascadeStopped,
        scheduleFired, scheduleMissed, scheduleSkipped, scheduleWaiting,
        workflowStarted, workflowSucceeded, workflowFailed, workflowCancelled, workflowApprovalRequested, workflowCascadeStopped,
        chatMessage,
    ]

    /// The event of a run that ended with `status` (or changed to it).
    package static func task(_ status: TaskRun.Status) -> RuntimeEvent {
        switch status {
        case .queued: taskQueued
        case .running: taskStarted
        case .retrying: taskRetrying
        case .succeeded: taskSucceeded
        case .failed: taskFailed
        case .timedOut: taskTimedOut
        case .cancelled: taskCancelled
        case .abandoned: taskAbandoned
        }
    }

    package static func schedule(_ outcome: ScheduleHistoryEntry.Outcome) -> RuntimeEvent {
        switch outcome {
        case .fired: scheduleFired
        case .missed: scheduleMissed
        case .skipped: scheduleSkipped
        case .waiting: scheduleWaiting
        }
    }

    /// The event of a workflow run that ended with `status` (nil: not an end).
    package static func workflow(_ status: WorkflowRun.Status) -> RuntimeEvent? {
        switch status {
        case .succeeded: workflowSucceeded
        case .failed: workflowFailed
        case .cancelled: workflowCancelled
        case .running, .waiting: nil
        }
    }
}
