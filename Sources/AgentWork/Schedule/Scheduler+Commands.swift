import AgentBase
import AgentLoop
import Foundation
import JSONSchema

extension Scheduler {
    /// `schedule_list`.
    package func scheduleList() -> [JSONValue] { entries.keys.sorted().compactMap(describe) }

    /// The refusal for a name that is no schedule, with the closest one.
    func unknown(_ name: String) -> CommandError {
        if inFleet, leadership == nil, fleetDefinitions.contains(where: { $0.name == name }) {
            return .conflict("schedule \"\(name)\" is fired by the agent that leads the fleet's schedules, not by this one: ask that agent (`agent-control schedule list` names it)")
        }
        let names = inFleet ? fleetDefinitions.map(\.name).sorted() : entries.keys.sorted()
        return .notFound("no schedule named \"\(name)\"\(Suggestions.hint(for: name, in: names)); schedules: \(names.isEmpty ? "none (add them under \"schedules\" in the settings)" : names.joined(separator: ", "))")
    }

    /// `schedule_next`.
    package func comingTimes(_ name: String, count: Int) -> Result<ScheduleNextCommand.Answer, CommandError> {
        guard let entry = entries[name] else { return .failure(unknown(name)) }
        let zone = entry.definition.timeZone
        return .success(ScheduleNextCommand.Answer(schedule: name, timezone: zone.identifier,
                                                   times: nextTimes(name, count: count).map { Self.local($0, in: zone) }))
    }

    /// `schedule_run`: fires the schedule now; answers once the run is handed over.
    package func runNow(_ name: String, respond: @escaping (Result<ScheduleRunCommand.Answer, CommandError>) -> Void) {
        guard entries[name] != nil else { return respond(.failure(unknown(name))) }
        var commit = ScheduleCommit()
        let run = fire(name, planned: nil, count: 1, first: nil, reason: "run now", overlap: false, into: &commit)
        let workflowRun = commit.workflowRuns.first
        flush(commit) { [weak self] runs in
            guard let self else { return respond(.failure(.stopping)) }
            if let workflowRun {
                let shown = workflows?.known(workflowRun.id)?.run ?? workflowRun
                return respond(.success(ScheduleRunCommand.Answer(run: shown.json, workflowRun: shown.json, schedule: describe(name) ?? .null)))
            }
            let handed = runs.first ?? run
            respond(.success(ScheduleRunCommand.Answer(run: handed.map(\.json) ?? .null, schedule: describe(name) ?? .null)))
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
    package func setPaused(_ name: String, _ paused: Bool) -> Result<ScheduleChangeAnswer, CommandError> {
        guard let entry = entries[name] else { return .failure(unknown(name)) }
        guard entry.state.paused != paused else {
            return .success(ScheduleChangeAnswer(changed: false, schedule: describe(name) ?? .null))
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
        return .success(ScheduleChangeAnswer(changed: true, schedule: describe(name) ?? .null))
    }

    /// `schedule_history`: from the store (off the loop), the results of runs still going from memory.
    package func history(_ name: String, limit: Int, respond: @escaping (Result<ScheduleHistoryCommand.Answer, CommandError>) -> Void) {
        let definition = scheduleDefinition(named: name)
        // A removed schedule's history stays, read in UTC (its zone went with it).
        guard definition != nil || store != nil else { return respond(.failure(unknown(name))) }
        let zone = definition?.timeZone ?? TimeZone(identifier: "UTC")!
        let refusal = definition == nil ? unknown(name) : nil
        guard let store else {
            let lines = recentHistory.filter { $0.schedule == name }.suffix(limit).reversed()
            return respond(.success(ScheduleHistoryCommand.Answer(stored: false, history: lines.map {
                $0.json(result: $0.runID.flatMap(knownResult), zone: zone)
            })))
        }
        let runStore = tasks.store
        let inbox = loop.inbox
        let reply = LoopOwned(respond)
        let workflowStore = workflows?.store
        Task.detached {
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
                    reply.value(.failure(.unavailable("cannot read the schedule's history from the store: \(error)")))
                case .success(let lines) where lines.isEmpty && refusal != nil:
                    reply.value(.failure(refusal!))
                case .success(let lines):
                    // Memory is newer than the store for runs still going.
                    let scheduler = self
                    reply.value(.success(ScheduleHistoryCommand.Answer(stored: true, history: lines.map { line, stored in
                        line.json(result: line.runID.flatMap(scheduler.knownResult) ?? stored, zone: zone)
                    })))
                }
            }
        }
    }

    /// A schedule as `schedule list` shows it.
    package func describe(_ name: String) -> JSONValue? {
        guard let entry = entries[name] else { return nil }
        return describe(entry.definition, state: entry.state, counts: (entry.fired, entry.missed, entry.skipped))
    }

    /// A schedule's definition and state as `schedule list` shows them; `counts`: fired, missed
    /// and skipped over this agent's life (nil: not known here, another agent fires it).
    package func describe(_ definition: ScheduleDefinition, state: ScheduleState, counts: (Int, Int, Int)?) -> JSONValue {
        let shown = definition.timing.shown
        var object: JSONObject = [
            "name": .string(definition.name),
            "timezone": .string(definition.timeZone.identifier), "enabled": .bool(definition.enabled), "paused": .bool(state.paused),
            "catch_up": .string(definition.catchUp.rawValue), "overlap": .string(definition.overlap.rawValue),
        ]
        if case let (fired, missed, skipped)? = counts {
            object["fired"] = .number(JSONNumber(fired))
            object["missed"] = .number(JSONNumber(missed))
            object["skipped"] = .number(JSONNumber(skipped))
        }
        // A number given as a number comes back as one: `every` is seconds, not text.
        if case .every(let period) = definition.timing { object["every"] = .number(period.rounded() == period && abs(period) < 1e15 ? JSONNumber(Int(period)) : JSONNumber(period)) } else { object[shown.key] = .string(shown.text) }
        if let workflow = definition.workflow { object["workflow"] = .string(workflow) } else { object["task"] = .string(definition.task) }
        if definition.catchUp == .all { object["max_catch_up"] = .number(JSONNumber(definition.maxCatchUp)) }
        if let window = definition.catchUpWindow { object["catch_up_window"] = .number(JSONNumber(window)) }
        if definition.jitter > 0 { object["jitter"] = .number(JSONNumber(definition.jitter)) }
        if !definition.description.isEmpty { object["description"] = .string(definition.description) }
        if definition.enabled, !state.paused, let next = state.next {
            object["next_fire"] = .string(Self.local(next, in: definition.timeZone))
        }
        if let last = state.lastFire { object["last_fire"] = .string(Self.local(last, in: definition.timeZone)) }
        if let run = state.lastRun {
            object["last_run"] = .string(run)
            if let status = knownResult(run) { object["last_result"] = .string(status) }
        }
        if let waiting = state.waiting { object["waiting"] = .string(Self.local(waiting, in: definition.timeZone)) }
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
    nonisolated package static func local(_ time: Double, in zone: TimeZone) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.timeZone = zone
        formatter.formatOptions = time.rounded() == time ? [.withInternetDateTime] : [.withInternetDateTime, .withFractionalSeconds]
        return formatter.string(from: Date(timeIntervalSince1970: time))
    }
}
