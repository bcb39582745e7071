import AgentBase
import AgentLoop
import Foundation
import JSONSchema

extension Scheduler {
    /// The schedule commands of every front (``CommandCatalog/schedules``), on the loop. Reads
    /// of the store are made on another thread; `inbox` brings their answer back to the loop.
    package func answer(_ request: JSONValue, runStore: (any RunStore)?, inbox: LoopInbox, respond: @escaping (JSONValue) -> Void) {
        let command = request["command"]?.stringValue ?? ""
        if command == "schedule_list" { return respond(["ok": true, "schedules": .array(entries.keys.sorted().compactMap(describe))]) }
        guard let name = request["name"]?.stringValue, !name.isEmpty else {
            return respond(TaskCoordinator.refusal("invalid", "expected \"name\": the schedule's name (a string, as `agent-control schedule list` shows it); found \(request["name"].map(Describe.value) ?? "nothing")", pointer: "/name"))
        }
        guard entries[name] != nil else {
            let names = entries.keys.sorted()
            return respond(TaskCoordinator.refusal("not_found", "no schedule named \"\(name)\"\(Suggestions.hint(for: name, in: names)); schedules: \(names.isEmpty ? "none (add them under \"schedules\" in the settings)" : names.joined(separator: ", "))"))
        }
        switch command {
        case "schedule_next":
            var count = 10
            if let value = request["count"] {
                guard let number = value.numberValue?.intValue, (1...10_000).contains(number) else {
                    return respond(TaskCoordinator.refusal("invalid", "\"count\" must be a whole number from 1 to 10000; found \(Describe.value(value))", pointer: "/count"))
                }
                count = number
            }
            respond(["ok": true, "schedule": .string(name), "timezone": .string(entries[name]!.definition.timeZone.identifier),
                     "times": .array(nextTimes(name, count: count).map { .string(Self.local($0, in: entries[name]!.definition.timeZone)) })])
        case "schedule_pause": respond(setPaused(name, true))
        case "schedule_resume": respond(setPaused(name, false))
        case "schedule_run":
            var commit = ScheduleCommit()
            let run = fire(name, planned: nil, count: 1, first: nil, reason: "run now", overlap: false, into: &commit)
            let workflowRun = commit.workflowRuns.first
            flush(commit) { [weak self] runs in
                guard let self else { return respond(CommandAnswer.stopping) }
                if let workflowRun {
                    let shown = workflows?.known(workflowRun.id)?.run ?? workflowRun
                    return respond(["ok": true, "run": shown.json, "workflow_run": shown.json, "schedule": describe(name) ?? .null])
                }
                let handed = runs.first ?? run
                respond(["ok": true, "run": handed.map(\.json) ?? .null, "schedule": describe(name) ?? .null])
            }
        case "schedule_history":
            var limit = 100
            if let value = request["limit"] {
                guard let number = value.numberValue?.intValue, (1...10_000).contains(number) else {
                    return respond(TaskCoordinator.refusal("invalid", "\"limit\" must be a whole number from 1 to 10000; found \(Describe.value(value))", pointer: "/limit"))
                }
                limit = number
            }
            history(name, limit: limit, runStore: runStore, inbox: inbox, respond: respond)
        default:
            respond(TaskCoordinator.refusal("invalid", "unknown schedule command \"\(command)\""))
        }
    }

    /// The coming fire times of `name` (the first is the one armed, before its jitter).
    package func nextTimes(_ name: String, count: Int) -> [Double] {
        guard let entry = entries[name] else { return [] }
        var times: [Double] = []
        var cursor = max(entry.state.through, clock())
        if let next = entry.state.next, next > entry.state.through { cursor = min(cursor, next - 1e-9) }
        while times.count < count, let time = entry.definition.timing.nextFire(after: cursor, in: entry.definition.timeZone) {
            times.append(time)
            cursor = time
        }
        return times
    }

    /// Pause (persisted) or resume: fire times while paused are skipped, recorded as such.
    private func setPaused(_ name: String, _ paused: Bool) -> JSONValue {
        guard let entry = entries[name] else { return TaskCoordinator.refusal("not_found", "no schedule named \"\(name)\"") }
        guard entry.state.paused != paused else {
            return ["ok": true, "changed": false, "schedule": describe(name) ?? .null]
        }
        let now = clock()
        var commit = ScheduleCommit()
        if !paused {
            let definition = entry.definition
            let skipped = definition.timing.isReboot ? ScheduleTiming.Due.empty
                : definition.timing.fireTimes(after: entry.state.through, through: now, in: definition.timeZone, keep: 1)
            computedFireTimes += skipped.computed
            if skipped.count > 0 {
                commit.history.append(ScheduleHistoryEntry(schedule: name, planned: skipped.newest.last, actual: now, outcome: .skipped,
                                                           reason: "the schedule was paused" + Self.inPart(skipped), count: skipped.count,
                                                           firstPlanned: skipped.count > 1 ? skipped.first : nil))
                entries[name]?.skipped += skipped.count
            }
            entries[name]?.state.through = max(entry.state.through, now)
        }
        entries[name]?.state.paused = paused
        reschedule(name)
        if let state = entries[name]?.state { commit.states.append(state) }
        flush(commit)
        rearm()
        return ["ok": true, "changed": true, "schedule": describe(name) ?? .null]
    }

    private func history(_ name: String, limit: Int, runStore: (any RunStore)?, inbox: LoopInbox, respond: @escaping (JSONValue) -> Void) {
        let zone = entries[name]?.definition.timeZone ?? .current
        guard let store else {
            let lines = recentHistory.filter { $0.schedule == name }.suffix(limit).reversed()
            return respond(["ok": true, "stored": false, "history": .array(lines.map {
                $0.json(result: $0.runID.flatMap(knownResult), zone: zone)
            })])
        }
        let reply = LoopBound(value: respond)
        let this = LoopBound(value: self)
        let workflowStore = workflows?.store
        Task {
            let result: Result<[(ScheduleHistoryEntry, String?)], any Error>
            do {
                var lines: [(ScheduleHistoryEntry, String?)] = []
                for line in try await store.history(schedule: name, limit: limit) {
                    var status: String?
                    if let id = line.runID {
                        if let runStore { status = try? await runStore.run(id: id)?.status.rawValue }
                        if status == nil { status = try? await workflowStore?.run(id: id)?.run.status.rawValue }
                    }
                    lines.append((line, status))
                }
                result = .success(lines)
            } catch {
                result = .failure(error)
            }
            inbox.post {
                switch result {
                case .failure(let error):
                    reply.value(TaskCoordinator.refusal("unavailable", "cannot read the schedule's history from the store: \(error)"))
                case .success(let lines):
                    // Memory is newer than the store for runs still going.
                    let scheduler = this.value
                    reply.value(["ok": true, "stored": true, "history": .array(lines.map { line, stored in
                        line.json(result: line.runID.flatMap(scheduler.knownResult) ?? stored, zone: zone)
                    })])
                }
            }
        }
    }

    /// A schedule as `schedule list` shows it.
    package func describe(_ name: String) -> JSONValue? {
        guard let entry = entries[name] else { return nil }
        let definition = entry.definition
        let shown = definition.timing.shown
        var object: JSONObject = [
            "name": .string(name), shown.key: .string(shown.text),
            "timezone": .string(definition.timeZone.identifier), "enabled": .bool(definition.enabled), "paused": .bool(entry.state.paused),
            "catch_up": .string(definition.catchUp.rawValue), "overlap": .string(definition.overlap.rawValue),
            "fired": .number(JSONNumber(entry.fired)), "missed": .number(JSONNumber(entry.missed)), "skipped": .number(JSONNumber(entry.skipped)),
        ]
        if let workflow = definition.workflow { object["workflow"] = .string(workflow) } else { object["task"] = .string(definition.task) }
        if definition.catchUp == .all { object["max_catch_up"] = .number(JSONNumber(definition.maxCatchUp)) }
        if let window = definition.catchUpWindow { object["catch_up_window"] = .number(JSONNumber(window)) }
        if definition.jitter > 0 { object["jitter"] = .number(JSONNumber(definition.jitter)) }
        if !definition.description.isEmpty { object["description"] = .string(definition.description) }
        if definition.enabled, !entry.state.paused, let next = entry.state.next {
            object["next_fire"] = .string(Self.local(next, in: definition.timeZone))
        }
        if let last = entry.state.lastFire { object["last_fire"] = .string(Self.local(last, in: definition.timeZone)) }
        if let run = entry.state.lastRun {
            object["last_run"] = .string(run)
            if let status = knownResult(run) { object["last_result"] = .string(status) }
        }
        if let waiting = entry.state.waiting { object["waiting"] = .string(Self.local(waiting, in: definition.timeZone)) }
        return .object(object)
    }

    /// The status of run `id` (a task run's or a workflow run's) while the agent knows it in memory.
    package func knownResult(_ id: String) -> String? {
        tasks.knownRun(id)?.status.rawValue ?? workflows?.known(id)?.run.status.rawValue
    }

    /// Each schedule's figures for the metrics.
    package var figures: [ScheduleFigures] {
        entries.keys.sorted().map { name in
            let entry = entries[name]!
            return ScheduleFigures(schedule: name, fired: entry.fired, missed: entry.missed, skipped: entry.skipped,
                                                 next: entry.definition.enabled && !entry.state.paused ? entry.state.next : nil)
        }
    }

    /// ISO 8601 local time with its UTC offset: `2026-11-25T03:00:00+01:00`.
    package static func local(_ time: Double, in zone: TimeZone) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.timeZone = zone
        formatter.formatOptions = time.rounded() == time ? [.withInternetDateTime] : [.withInternetDateTime, .withFractionalSeconds]
        return formatter.string(from: Date(timeIntervalSince1970: time))
    }
}
