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

        /// The declared labels: a sample with another one is a mistake of this file.
        private let declaredLabels: Set<String>

        package init(_ declaration: MetricDeclaration, _ samples: [(labels: [(String, String)], value: Double)] = []) {
            name = declaration.name
            kind = declaration.kind
            help = declaration.help
            declaredLabels = Set(declaration.labels.map(\.name))
            self.samples = []
            for sample in samples { add(sample.labels, sample.value) }
        }

        /// A sample; its labels are among the declaration's (docs/reference/metrics.md lists those).
        package mutating func add(_ labels: [(String, String)], _ value: Double) {
            assert(labels.allSatisfy { declaredLabels.contains($0.0) }, "\(name): a label not declared in MetricDeclaration+Catalog.swift")
            samples.append((labels, value))
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
        func family(_ declaration: MetricDeclaration, _ value: Double) -> MetricFamily {
            MetricFamily(declaration, [([], value)])
        }
        var families: [MetricFamily] = [
            family(.uptime, uptime),
            family(.eventsRouted, Double(totals.eventsEmitted)),
            family(.eventDeliveries, Double(totals.eventsDelivered)),
            family(.eventsDropped, Double(totals.eventsDropped)),
            family(.restarts, Double(totals.restarts)),
            family(.chatRequests, Double(chatRequests)),
            family(.longestTurn, loop.longestTurn),
            family(.slowTurns, Double(loop.slowTurns)),
        ]

        var state = MetricFamily(.processState)
        var restarts = MetricFamily(.processRestarts)
        var emitted = MetricFamily(.processEmitted)
        var delivered = MetricFamily(.processDelivered)
        var dropped = MetricFamily(.processDropped)
        var queue = MetricFamily(.processQueue)
        var refused = MetricFamily(.processLinesRefused)
        var paused = MetricFamily(.processPaused)
        var cpu = MetricFamily(.processCPU)
        var memory = MetricFamily(.processMemory)
        for process in processes {
            // A replica: its process's name and its number, so that `sum by (process)` adds
            // the replicas up (bounded: at most SettingsBounds.mostReplicas per process).
            let label = process.info.replicaOf.map { [("process", $0), ("replica", String(process.info.replica))] } ?? [("process", process.info.name)]
            let current = process.stateName
            for name in Self.stateNames { state.add(label + [("state", name)], name == current ? 1 : 0) }
            restarts.add(label, Double(process.info.restarts))
            emitted.add(label, Double(process.info.eventsEmitted))
            delivered.add(label, Double(process.info.eventsDelivered))
            dropped.add(label, Double(process.info.eventsDropped))
            queue.add(label, Double(process.info.queuedBytes))
            paused.add(label, process.info.paused ? 1 : 0)
            refused.add(label, Double(process.info.linesRefused))
            if let pid = process.workerPid, let usage = ProcessUsage.recent(pid) {
                cpu.add(label, usage.cpuSeconds)
                memory.add(label, Double(usage.rssBytes))
            }
        }
        for process in disabled {
            for name in Self.stateNames { state.add([("process", process.name), ("state", name)], name == "disabled" ? 1 : 0) }
        }
        families += [state, restarts, emitted, delivered, dropped, queue, paused, refused, cpu, memory]

        if let usage = ProcessUsage.ofSelf() {
            families.append(family(.supervisorCPU, usage.cpuSeconds))
            families.append(family(.supervisorMemory, Double(usage.rssBytes)))
        }

        if let store {
            families += [
                family(.storeCommitted, Double(store.committed)),
                family(.storeTransactions, Double(store.batches)),
                family(.storeDropped, Double(store.dropped)),
                family(.storeDroppedChatLines, Double(store.droppedChatLines)),
                family(.storeDroppedHistoryLines, Double(store.droppedHistoryLines)),
                family(.storeWriteErrors, Double(store.writeErrors)),
                family(.storePending, Double(store.pending)),
                family(.storeRetained, Double(store.retained)),
                family(.storeLost, Double(store.lostChanges)),
                family(.storeExpired, Double(store.expired)),
                family(.storeBytesInUse, Double(store.bytesInUse)),
                family(.storeDegraded, store.degraded == nil ? 0 : 1),
            ]
        }

        var outputDelivered = MetricFamily(.outputDelivered)
        var outputDropped = MetricFamily(.outputDropped)
        var outputFailures = MetricFamily(.outputFailures)
        var outputQueued = MetricFamily(.outputQueued)
        for output in outputs {
            let labels = [("output", output.name), ("type", output.type)]
            outputDelivered.add(labels, Double(output.delivered))
            outputDropped.add(labels, Double(output.dropped))
            outputFailures.add(labels, Double(output.failedAttempts))
            outputQueued.add(labels, Double(output.queued))
        }
        families += [outputDelivered, outputDropped, outputFailures, outputQueued]

        var queued = MetricFamily(.taskQueued)
        var running = MetricFamily(.taskRunning)
        var ended = MetricFamily(.taskAttempts)
        var abandoned = MetricFamily(.taskAbandoned)
        for task in tasks {
            let label = [("task", task.task)]
            queued.add(label, Double(task.queued))
            running.add(label, Double(task.running))
            for outcome in MetricDeclaration.taskOutcomes {
                ended.add(label + [("outcome", outcome)], Double(task.ended[outcome] ?? 0))
            }
            abandoned.add(label, Double(task.abandoned))
        }
        families += [queued, running, ended, abandoned]

        if let notifications {
            // Fixed labels only: two channels, a few results.
            families.append(MetricFamily(
                .notifications,
                [([("channel", "email"), ("result", "sent")], Double(notifications.emailsSent)),
                 ([("channel", "email"), ("result", "failed")], Double(notifications.emailsFailed)),
                 ([("channel", "email"), ("result", "dropped")], Double(notifications.emailsDropped)),
                 ([("channel", "output"), ("result", "published")], Double(notifications.recordsPublished))]))
            families += [
                family(.notificationFailedAttempts, Double(notifications.failedAttempts)),
                family(.notificationsQueued, Double(notifications.queued)),
                family(.notificationSettingsErrors, Double(notifications.settingsErrors)),
            ]
        }

        if let assignment {
            var byState = MetricFamily(.executors)
            for state in ExecutorPool.State.allCases {
                byState.add([("state", state.rawValue)], Double(assignment.executors.filter { $0.state == state.rawValue }.count))
            }
            var running = MetricFamily(.executorRunning)
            var capacity = MetricFamily(.executorCapacity)
            var assigned = MetricFamily(.executorAssigned)
            for executor in assignment.executors {
                let label = [("executor", executor.name)]
                running.add(label, Double(executor.running))
                capacity.add(label, Double(executor.maxConcurrent))
                assigned.add(label, Double(executor.assigned))
            }
            var queuedByPriority = MetricFamily(.queuedByPriority)
            for priority in TaskRun.Priority.allCases {
                queuedByPriority.add([("priority", priority.rawValue)], Double(assignment.queuedByPriority[priority.rawValue] ?? 0))
            }
            families += [byState, running, capacity, assigned, queuedByPriority,
                         family(.waitSum, assignment.waitSum),
                         family(.waitCount, Double(assignment.started)),
                         family(.waitMax, assignment.waitLongest)]
        }

        var fires = MetricFamily(.scheduleFires)
        var missed = MetricFamily(.scheduleMissed)
        var skipped = MetricFamily(.scheduleSkipped)
        var next = MetricFamily(.scheduleNext)
        for schedule in schedules {
            let label = [("schedule", schedule.schedule)]
            fires.add(label, Double(schedule.fired))
            missed.add(label, Double(schedule.missed))
            skipped.add(label, Double(schedule.skipped))
            if let time = schedule.next { next.add(label, time) }
        }
        families += [fires, missed, skipped, next]
        return families
    }
}
