import AgentSupervision
import AgentWork
import Foundation
import JSONSchema

/// The `metrics` command: the agent's figures as metric families named the Prometheus way (an
/// `agent_` prefix, base units, `_total` for counters), with bounded labels only (process and
/// output names from the settings, states from a fixed list). `GET /metrics` exposes them in
/// the Prometheus text format; `GET /api/metrics` and the control socket give them as JSON.
extension AgentSnapshot {
    /// One metric family: its samples, each with its labels.
    public struct MetricFamily: Sendable {
        public enum Kind: String, Sendable {
            case counter, gauge
        }

        public var name: String
        public var kind: Kind
        public var help: String
        public var samples: [(labels: [(String, String)], value: Double)]

        package init(_ name: String, _ kind: Kind, _ help: String, _ samples: [(labels: [(String, String)], value: Double)] = []) {
            self.name = name
            self.kind = kind
            self.help = help
            self.samples = samples
        }

        package var json: JSONValue {
            .object([
                "name": .string(name), "type": .string(kind.rawValue), "help": .string(help),
                "samples": .array(samples.map { sample in
                    .object(["labels": .object(JSONObject(sample.labels.map { ($0.0, JSONValue.string($0.1)) })),
                             "value": .number(JSONNumber(sample.value))])
                }),
            ])
        }
    }

    /// Every state `agent_process_state` has a sample for.
    public static let stateNames = ["starting", "running", "backoff", "stopping", "stopped", "exited", "failed", "suspended", "disabled"]

    /// The answer of `metrics`: `{"ok": true, "families": [{name, type, help, samples: [{labels, value}]}]}`.
    public var metricsAnswer: JSONValue {
        ["ok": true, "families": .array(metricFamilies.map(\.json))]
    }

    /// The metric families. Reads each worker's CPU time and memory from /proc: call it off
    /// the loop where it can be.
    public var metricFamilies: [MetricFamily] {
        func family(_ name: String, _ kind: MetricFamily.Kind, _ help: String, _ value: Double) -> MetricFamily {
            MetricFamily(name, kind, help, [([], value)])
        }
        var families: [MetricFamily] = [
            family("agent_uptime_seconds", .gauge, "Seconds since the supervisor started.", uptime),
            family("agent_events_routed_total", .counter, "Events the processes emitted (routed by the supervisor), over the agent's life.", Double(totals.eventsEmitted)),
            family("agent_event_deliveries_total", .counter, "Events queued for delivery to a subscribed process, over the agent's life.", Double(totals.eventsDelivered)),
            family("agent_events_dropped_total", .counter, "Events a subscriber's full queue dropped, or lost with a dead worker, over the agent's life.", Double(totals.eventsDropped)),
            family("agent_restarts_total", .counter, "Worker restarts after an end nobody asked for, over the agent's life.", Double(totals.restarts)),
            family("agent_chat_requests_total", .counter, "Chat messages handed to the chatbot process.", Double(chatRequests)),
            family("agent_loop_longest_turn_seconds", .gauge, "The longest the supervisor's loop has been busy in one turn (it answers nothing else meanwhile).", loop.longestTurn),
            family("agent_loop_slow_turns_total", .counter, "Turns of the supervisor's loop that took 10 ms or more.", Double(loop.slowTurns)),
        ]

        var state = MetricFamily("agent_process_state", .gauge, "1 for the state the process is in, 0 for the others.")
        var restarts = MetricFamily("agent_process_restarts_total", .counter, "Restarts of the process's worker since the process was configured (a reload that changes it starts over).")
        var emitted = MetricFamily("agent_process_events_emitted_total", .counter, "Events the process emitted.")
        var delivered = MetricFamily("agent_process_events_delivered_total", .counter, "Events queued for delivery to the process.")
        var dropped = MetricFamily("agent_process_events_dropped_total", .counter, "Events for the process that were dropped (full queue, dead worker).")
        var queue = MetricFamily("agent_process_queue_bytes", .gauge, "Bytes of events waiting to be delivered to the process.")
        var refused = MetricFamily("agent_process_lines_refused_total", .counter, "Lines a jsonl/1 module's program wrote that were refused (not JSON, not a frame, too long).")
        var paused = MetricFamily("agent_process_paused", .gauge, "1 while a full subscriber holds the process paused (when_full: block).")
        var cpu = MetricFamily("agent_process_cpu_seconds_total", .counter, "User and system CPU time of the process's current worker.")
        var memory = MetricFamily("agent_process_resident_memory_bytes", .gauge, "Resident memory of the process's current worker.")
        for process in processes {
            // A replica: its process's name and its number, so that `sum by (process)` adds
            // the replicas up (bounded: at most SettingsBounds.mostReplicas per process).
            let label = process.info.replicaOf.map { [("process", $0), ("replica", String(process.info.replica))] } ?? [("process", process.info.name)]
            let current = process.stateName
            for name in Self.stateNames { state.samples.append((label + [("state", name)], name == current ? 1 : 0)) }
            restarts.samples.append((label, Double(process.info.restarts)))
            emitted.samples.append((label, Double(process.info.eventsEmitted)))
            delivered.samples.append((label, Double(process.info.eventsDelivered)))
            dropped.samples.append((label, Double(process.info.eventsDropped)))
            queue.samples.append((label, Double(process.info.queuedBytes)))
            paused.samples.append((label, process.info.paused ? 1 : 0))
            refused.samples.append((label, Double(process.info.linesRefused)))
            if let pid = process.workerPid, let usage = ProcessUsage.recent(pid) {
                cpu.samples.append((label, usage.cpuSeconds))
                memory.samples.append((label, Double(usage.rssBytes)))
            }
        }
        for process in disabled {
            for name in Self.stateNames { state.samples.append(([("process", process.name), ("state", name)], name == "disabled" ? 1 : 0)) }
        }
        families += [state, restarts, emitted, delivered, dropped, queue, paused, refused, cpu, memory]

        if let usage = ProcessUsage.ofSelf() {
            families.append(family("agent_supervisor_cpu_seconds_total", .counter, "User and system CPU time of the supervisor process (with the HTTP front).", usage.cpuSeconds))
            families.append(family("agent_supervisor_resident_memory_bytes", .gauge, "Resident memory of the supervisor process.", Double(usage.rssBytes)))
        }

        if let store {
            families += [
                family("agent_store_committed_events_total", .counter, "Events committed to the store.", Double(store.committed)),
                family("agent_store_transactions_total", .counter, "Write transactions the store committed.", Double(store.batches)),
                family("agent_store_dropped_events_total", .counter, "Events the store dropped (queue full, database not writable).", Double(store.dropped)),
                family("agent_store_write_errors_total", .counter, "Failed writes to the store.", Double(store.writeErrors)),
                family("agent_store_pending_events", .gauge, "Events waiting to be written to the store.", Double(store.pending)),
                family("agent_store_retained_changes", .gauge, "Changes of acknowledged runs the store could not write yet, kept to write when it can.", Double(store.retained)),
                family("agent_store_lost_changes_total", .counter, "Changes of acknowledged runs given up because too many waited to be written.", Double(store.lostChanges)),
                family("agent_store_degraded", .gauge, "1 while the store cannot write (see status for why), 0 otherwise.", store.degraded == nil ? 0 : 1),
            ]
        }

        var outputDelivered = MetricFamily("agent_output_delivered_total", .counter, "Records the output wrote or the webhook accepted.")
        var outputDropped = MetricFamily("agent_output_dropped_total", .counter, "Records the output lost (full queue, retries exhausted, failed write).")
        var outputFailures = MetricFamily("agent_output_failed_attempts_total", .counter, "Failed delivery attempts of the output.")
        var outputQueued = MetricFamily("agent_output_queued_records", .gauge, "Records waiting in the output's queue.")
        for output in outputs {
            let labels = [("output", output.name), ("type", output.type)]
            outputDelivered.samples.append((labels, Double(output.delivered)))
            outputDropped.samples.append((labels, Double(output.dropped)))
            outputFailures.samples.append((labels, Double(output.failedAttempts)))
            outputQueued.samples.append((labels, Double(output.queued)))
        }
        families += [outputDelivered, outputDropped, outputFailures, outputQueued]

        var queued = MetricFamily("agent_task_runs_queued", .gauge, "Runs of the task waiting: queued, or retrying until their next attempt.")
        var running = MetricFamily("agent_task_runs_running", .gauge, "Runs of the task being carried out.")
        var ended = MetricFamily("agent_task_attempts_total", .counter, "Attempts of the task's runs that ended, by outcome, over the agent's life.")
        var abandoned = MetricFamily("agent_task_runs_abandoned_total", .counter,
                                     "Runs of the task ended abandoned (interrupted more often than its max_interruptions), over the agent's life.")
        for task in tasks {
            let label = [("task", task.task)]
            queued.samples.append((label, Double(task.queued)))
            running.samples.append((label, Double(task.running)))
            for outcome in ["succeeded", "failed", "timed_out", "cancelled", "interrupted"] {
                ended.samples.append((label + [("outcome", outcome)], Double(task.ended[outcome] ?? 0)))
            }
            abandoned.samples.append((label, Double(task.abandoned)))
        }
        families += [queued, running, ended, abandoned]

        if let notifications {
            // Fixed labels only: two channels, a few results.
            families.append(MetricFamily(
                "agent_task_notifications_total", .counter,
                "Task notifications by channel and result: emails sent, failed (given up on after their retries) or dropped (queue full, agent stopping); records published to the outputs.",
                [([("channel", "email"), ("result", "sent")], Double(notifications.emailsSent)),
                 ([("channel", "email"), ("result", "failed")], Double(notifications.emailsFailed)),
                 ([("channel", "email"), ("result", "dropped")], Double(notifications.emailsDropped)),
                 ([("channel", "output"), ("result", "published")], Double(notifications.recordsPublished))]))
            families += [
                family("agent_task_notification_failed_attempts_total", .counter, "Failed attempts to send a notification email, retried ones included.", Double(notifications.failedAttempts)),
                family("agent_task_notifications_queued", .gauge, "Notification emails waiting or being sent.", Double(notifications.queued)),
                family("agent_task_notification_settings_errors_total", .counter, "Notifications not sent because a task's notify settings could not be read.", Double(notifications.settingsErrors)),
            ]
        }

        if let assignment {
            var byState = MetricFamily("agent_executors", .gauge, "Executors by state: online (room), busy (full), draining, offline (its worker died; held out for a backoff).")
            for state in ExecutorPool.State.allCases {
                byState.samples.append(([("state", state.rawValue)], Double(assignment.executors.filter { $0.state == state.rawValue }.count)))
            }
            var running = MetricFamily("agent_executor_runs_running", .gauge, "Runs on the executor now.")
            var capacity = MetricFamily("agent_executor_max_concurrent", .gauge, "Runs the executor takes at once.")
            var assigned = MetricFamily("agent_executor_assigned_total", .counter, "Runs assigned to the executor over the agent's life.")
            for executor in assignment.executors {
                let label = [("executor", executor.name)]
                running.samples.append((label, Double(executor.running)))
                capacity.samples.append((label, Double(executor.maxConcurrent)))
                assigned.samples.append((label, Double(executor.assigned)))
            }
            var queuedByPriority = MetricFamily("agent_task_runs_queued_by_priority", .gauge, "Runs waiting (queued or retrying), by priority, over every task.")
            for priority in TaskRun.Priority.allCases {
                queuedByPriority.samples.append(([("priority", priority.rawValue)], Double(assignment.queuedByPriority[priority.rawValue] ?? 0)))
            }
            families += [byState, running, capacity, assigned, queuedByPriority,
                         family("agent_task_wait_seconds_sum", .counter, "Seconds runs waited from due to start, summed over the runs started.", assignment.waitSum),
                         family("agent_task_wait_seconds_count", .counter, "Runs started (the count of agent_task_wait_seconds_sum).", Double(assignment.started)),
                         family("agent_task_wait_seconds_max", .gauge, "The longest a run waited from due to start.", assignment.waitLongest)]
        }

        var fires = MetricFamily("agent_schedule_fires_total", .counter, "Fires of the schedule that requested a run, over the agent's life.")
        var missed = MetricFamily("agent_schedule_missed_total", .counter, "Fire times of the schedule not run (agent down or late, clock correction, beyond catch-up limits).")
        var skipped = MetricFamily("agent_schedule_skipped_total", .counter, "Fire times of the schedule skipped (previous run still going, paused).")
        var next = MetricFamily("agent_schedule_next_fire_seconds", .gauge, "The schedule's next planned fire (Unix time; absent when none).")
        for schedule in schedules {
            let label = [("schedule", schedule.schedule)]
            fires.samples.append((label, Double(schedule.fired)))
            missed.samples.append((label, Double(schedule.missed)))
            skipped.samples.append((label, Double(schedule.skipped)))
            if let time = schedule.next { next.samples.append((label, time)) }
        }
        families += [fires, missed, skipped, next]
        return families
    }
}
