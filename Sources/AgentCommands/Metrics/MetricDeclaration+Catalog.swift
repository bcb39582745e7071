import AgentWork

/// Every metric family of the agent, in the order `GET /metrics` gives them.
extension MetricDeclaration {
    private static let process = Label("process", "the process's name (a replica's: its process's name)")
    private static let replica = Label("replica", "the replica's number, 1 … N (only on processes with `replicas`)")
    private static let processLabels = [process, replica]
    private static let output = [Label("output", "the output's name"), Label("type", "the output's type")]
    private static let task = Label("task", "the task's name")
    private static let executor = [Label("executor", "the executor's name")]
    private static let schedule = [Label("schedule", "the schedule's name")]
    private static let withStore = "with the store on"
    private static let withNotifications = "with task notifications set"
    private static let withExecutors = "with executors set (`assignment`)"

    public static let uptime = MetricDeclaration("agent_uptime_seconds", .gauge, "Seconds since the supervisor started.")
    public static let eventsRouted = MetricDeclaration("agent_events_routed_total", .counter, "Events the processes emitted (routed by the supervisor), over the agent's life.")
    public static let eventDeliveries = MetricDeclaration("agent_event_deliveries_total", .counter, "Events queued for delivery to a subscribed process, over the agent's life.")
    public static let eventsDropped = MetricDeclaration("agent_events_dropped_total", .counter, "Events a subscriber's full queue dropped, or lost with a dead worker, over the agent's life.")
    public static let restarts = MetricDeclaration("agent_restarts_total", .counter, "Worker restarts after an end nobody asked for, over the agent's life.")
    public static let chatRequests = MetricDeclaration("agent_chat_requests_total", .counter, "Chat messages handed to the chatbot process.")
    public static let longestTurn = MetricDeclaration("agent_loop_longest_turn_seconds", .gauge, "The longest the supervisor's loop has been busy in one turn (it answers nothing else meanwhile).")
    public static let slowTurns = MetricDeclaration("agent_loop_slow_turns_total", .counter, "Turns of the supervisor's loop that took 10 ms or more.")

    public static let processState = MetricDeclaration("agent_process_state", .gauge, "1 for the state the process is in, 0 for the others.",
                                                       labels: processLabels + [Label("state", AgentSnapshot.stateNames.joined(separator: ", "))])
    public static let processRestarts = MetricDeclaration("agent_process_restarts_total", .counter, "Restarts of the process's worker since the process was configured (a reload that changes it starts over).", labels: processLabels)
    public static let processEmitted = MetricDeclaration("agent_process_events_emitted_total", .counter, "Events the process emitted.", labels: processLabels)
    public static let processDelivered = MetricDeclaration("agent_process_events_delivered_total", .counter, "Events queued for delivery to the process.", labels: processLabels)
    public static let processDropped = MetricDeclaration("agent_process_events_dropped_total", .counter, "Events for the process that were dropped (full queue, dead worker).", labels: processLabels)
    public static let processQueue = MetricDeclaration("agent_process_queue_bytes", .gauge, "Bytes of events waiting to be delivered to the process.", labels: processLabels)
    public static let processLinesRefused = MetricDeclaration("agent_process_lines_refused_total", .counter, "Lines a jsonl/1 module's program wrote that were refused (not JSON, not a frame, too long).", labels: processLabels)
    public static let processPaused = MetricDeclaration("agent_process_paused", .gauge, "1 while a full subscriber holds the process paused (when_full: block).", labels: processLabels)
    public static let processCPU = MetricDeclaration("agent_process_cpu_seconds_total", .counter, "User and system CPU time of the process's current worker.", labels: processLabels)
    public static let processMemory = MetricDeclaration("agent_process_resident_memory_bytes", .gauge, "Resident memory of the process's current worker.", labels: processLabels)
    public static let supervisorCPU = MetricDeclaration("agent_supervisor_cpu_seconds_total", .counter, "User and system CPU time of the supervisor process (with the HTTP front).")
    public static let supervisorMemory = MetricDeclaration("agent_supervisor_resident_memory_bytes", .gauge, "Resident memory of the supervisor process.")

    public static let storeCommitted = MetricDeclaration("agent_store_committed_events_total", .counter, "Events committed to the store.", presence: withStore)
    public static let storeTransactions = MetricDeclaration("agent_store_transactions_total", .counter, "Write transactions the store committed.", presence: withStore)
    public static let storeDropped = MetricDeclaration("agent_store_dropped_events_total", .counter, "Events the store dropped (queue full, database not writable).", presence: withStore)
    public static let storeDroppedChatLines = MetricDeclaration("agent_store_dropped_chat_lines_total", .counter, "Chat lines the store dropped (database not writable, or waiting to retry).", presence: withStore)
    public static let storeDroppedHistoryLines = MetricDeclaration("agent_store_dropped_history_lines_total", .counter, "History lines (starts, exits, stops, audited commands) the store dropped (database not writable, or waiting to retry).", presence: withStore)
    public static let storeWriteErrors = MetricDeclaration("agent_store_write_errors_total", .counter, "Failed writes to the store.", presence: withStore)
    public static let storePending = MetricDeclaration("agent_store_pending_events", .gauge, "Events waiting to be written to the store.", presence: withStore)
    public static let storeRetained = MetricDeclaration("agent_store_retained_changes", .gauge, "Changes of acknowledged runs the store could not write yet, kept to write when it can.", presence: withStore)
    public static let storeLost = MetricDeclaration("agent_store_lost_changes_total", .counter, "Changes of acknowledged runs given up because too many waited to be written.", presence: withStore)
    public static let storeExpired = MetricDeclaration("agent_store_expired_events_total", .counter, "Events the retention deleted (max_age, max_events, max_bytes).", presence: withStore)
    public static let storeBytesInUse = MetricDeclaration("agent_store_bytes_in_use", .gauge, "Bytes of the database's pages in use when the retention last looked (at the start, then at each pass); retention.max_bytes bounds it.", presence: withStore)
    public static let storeDegraded = MetricDeclaration("agent_store_degraded", .gauge, "1 while the store cannot write (see status for why), 0 otherwise.", presence: withStore)

    public static let outputDelivered = MetricDeclaration("agent_output_delivered_total", .counter, "Records the output wrote or the webhook accepted.", labels: output)
    public static let outputDropped = MetricDeclaration("agent_output_dropped_total", .counter, "Records the output lost (full queue, retries exhausted, failed write).", labels: output)
    public static let outputFailures = MetricDeclaration("agent_output_failed_attempts_total", .counter, "Failed delivery attempts of the output.", labels: output)
    public static let outputQueued = MetricDeclaration("agent_output_queued_records", .gauge, "Records waiting in the output's queue.", labels: output)

    public static let taskQueued = MetricDeclaration("agent_task_runs_queued", .gauge, "Runs of the task waiting: queued, or retrying until their next attempt.", labels: [task])
    public static let taskRunning = MetricDeclaration("agent_task_runs_running", .gauge, "Runs of the task being carried out.", labels: [task])
    public static let taskAttempts = MetricDeclaration("agent_task_attempts_total", .counter, "Attempts of the task's runs that ended, by outcome, over the agent's life.",
                                                       labels: [task, Label("outcome", taskOutcomes.joined(separator: ", "))])
    public static let taskAbandoned = MetricDeclaration("agent_task_runs_abandoned_total", .counter,
                                                        "Runs of the task ended abandoned (interrupted more often than its max_interruptions), over the agent's life.", labels: [task])
    /// The outcomes `agent_task_attempts_total` counts.
    static let taskOutcomes = ["succeeded", "failed", "timed_out", "cancelled", "interrupted"]

    public static let notifications = MetricDeclaration(
        "agent_task_notifications_total", .counter,
        "Task notifications by channel and result: emails sent, failed (given up on after their retries) or dropped (queue full, agent stopping); records published to the outputs.",
        labels: [Label("channel", "email, output"), Label("result", "sent, failed, dropped (email); published (output)")], presence: withNotifications)
    public static let notificationFailedAttempts = MetricDeclaration("agent_task_notification_failed_attempts_total", .counter, "Failed attempts to send a notification email, retried ones included.", presence: withNotifications)
    public static let notificationsQueued = MetricDeclaration("agent_task_notifications_queued", .gauge, "Notification emails waiting or being sent.", presence: withNotifications)
    public static let notificationSettingsErrors = MetricDeclaration("agent_task_notification_settings_errors_total", .counter, "Notifications not sent because a task's notify settings could not be read.", presence: withNotifications)

    public static let executors = MetricDeclaration("agent_executors", .gauge, "Executors by state: online (room), busy (full), draining, offline (its worker died; held out for a backoff).",
                                                    labels: [Label("state", ExecutorPool.State.allCases.map(\.rawValue).joined(separator: ", "))], presence: withExecutors)
    public static let executorRunning = MetricDeclaration("agent_executor_runs_running", .gauge, "Runs on the executor now.", labels: executor, presence: withExecutors)
    public static let executorCapacity = MetricDeclaration("agent_executor_max_concurrent", .gauge, "Runs the executor takes at once.", labels: executor, presence: withExecutors)
    public static let executorAssigned = MetricDeclaration("agent_executor_assigned_total", .counter, "Runs assigned to the executor over the agent's life.", labels: executor, presence: withExecutors)
    public static let queuedByPriority = MetricDeclaration("agent_task_runs_queued_by_priority", .gauge, "Runs waiting (queued or retrying), by priority, over every task.",
                                                           labels: [Label("priority", TaskRun.Priority.allCases.map(\.rawValue).joined(separator: ", "))], presence: withExecutors)
    public static let waitSum = MetricDeclaration("agent_task_wait_seconds_sum", .counter, "Seconds runs waited from due to start, summed over the runs started.", presence: withExecutors)
    public static let waitCount = MetricDeclaration("agent_task_wait_seconds_count", .counter, "Runs started (the count of agent_task_wait_seconds_sum).", presence: withExecutors)
    public static let waitMax = MetricDeclaration("agent_task_wait_seconds_max", .gauge, "The longest a run waited from due to start.", presence: withExecutors)

    public static let scheduleFires = MetricDeclaration("agent_schedule_fires_total", .counter, "Fires of the schedule that requested a run, over the agent's life.", labels: schedule)
    public static let scheduleMissed = MetricDeclaration("agent_schedule_missed_total", .counter, "Fire times of the schedule not run (agent down or late, clock correction, beyond catch-up limits).", labels: schedule)
    public static let scheduleSkipped = MetricDeclaration("agent_schedule_skipped_total", .counter, "Fire times of the schedule skipped (previous run still going, paused).", labels: schedule)
    public static let scheduleNext = MetricDeclaration("agent_schedule_next_fire_seconds", .gauge, "The schedule's next planned fire (Unix time; absent when none).", labels: schedule)

    /// Counted by the HTTP front itself as requests finish; only in `GET /metrics`.
    public static let httpRequests = MetricDeclaration(
        "agent_http_requests_total", .counter, "HTTP requests answered, by route template, method and status.",
        labels: [Label("route", "the route template (`/api/processes/{name}/stop`), or `unmatched`"),
                 Label("method", "GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS or other"), Label("status", "the HTTP status code")],
        presence: "with the HTTP front on; in GET /metrics only")

    /// Every family, in the order of `GET /metrics`.
    public static let all: [MetricDeclaration] = [
        uptime, eventsRouted, eventDeliveries, eventsDropped, restarts, chatRequests, longestTurn, slowTurns,
        processState, processRestarts, processEmitted, processDelivered, processDropped, processQueue, processPaused, processLinesRefused, processCPU, processMemory,
        supervisorCPU, supervisorMemory,
        storeCommitted, storeTransactions, storeDropped, storeDroppedChatLines, storeDroppedHistoryLines, storeWriteErrors, storePending, storeRetained, storeLost, storeExpired, storeBytesInUse, storeDegraded,
        outputDelivered, outputDropped, outputFailures, outputQueued,
        taskQueued, taskRunning, taskAttempts, taskAbandoned,
        notifications, notificationFailedAttempts, notificationsQueued, notificationSettingsErrors,
        executors, executorRunning, executorCapacity, executorAssigned, queuedByPriority, waitSum, waitCount, waitMax,
        scheduleFires, scheduleMissed, scheduleSkipped, scheduleNext,
        httpRequests,
    ]
}
