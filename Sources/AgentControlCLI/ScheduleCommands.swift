import AgentBase
import AgentWork
import ArgumentParser
import Foundation
import JSONSchema

/// The subcommands of `agent-control schedule` that ask the running agent (`next EXPRESSION`
/// is in Schedule.swift).
enum ScheduleAgentCommands {
    static let all: [any ParsableCommand.Type] = [ScheduleList.self, SchedulePause.self, ScheduleResume.self, ScheduleRun.self, ScheduleHistory.self]

    /// One line per schedule: NAME  TASK (or `workflow NAME`)  TIMING  next …  last … (result)  [paused].
    static func line(_ schedule: JSONValue) -> String {
        var timing = "?"
        for key in ["cron", "every", "at"] {
            // `every` is a number of seconds, `cron` and `at` are text.
            if let value = schedule[key].map({ $0.stringValue ?? $0.serialized() }) {
                timing = key == "every" ? "every \(value) s" : key == "at" ? "at \(value)" : "cron \"\(value)\""
            }
        }
        let target = schedule["workflow"]?.stringValue.map { "workflow " + $0 } ?? schedule["task"]?.stringValue ?? "?"
        var text = "\(schedule["name"]?.stringValue ?? "?")  \(target)  \(timing)"
        if schedule["timezone"]?.stringValue != nil, schedule["cron"] != nil { text += " (\(schedule["timezone"]!.stringValue!))" }
        if schedule["enabled"] == false {
            text += "  disabled"
        } else if schedule["paused"] == true {
            text += "  paused"
        } else {
            text += "  next \(schedule["next_fire"]?.stringValue ?? "none")"
        }
        if let last = schedule["last_fire"]?.stringValue {
            text += "  last \(last)"
            if let result = schedule["last_result"]?.stringValue { text += " (\(result))" }
        }
        let missed = schedule["missed"]?.numberValue?.intValue ?? 0, skipped = schedule["skipped"]?.numberValue?.intValue ?? 0
        if missed > 0 || skipped > 0 { text += "  missed \(missed), skipped \(skipped)" }
        return text
    }

    /// `schedule history`: PLANNED  ACTUAL  OUTCOME  RUN (RESULT)  ×COUNT  REASON.
    static func historyLine(_ entry: JSONValue) -> String {
        var text = "\(entry["planned"]?.stringValue ?? "(run now)")  \(entry["actual"]?.stringValue ?? "?")  \(entry["outcome"]?.stringValue ?? "?")"
        if let run = entry["run_id"]?.stringValue { text += "  \(run)\(entry["result"]?.stringValue.map { " (\($0))" } ?? "")" }
        if let count = entry["count"]?.numberValue?.intValue, count > 1 {
            text += "  ×\(count)\(entry["first_planned"]?.stringValue.map { " from \($0)" } ?? "")"
        }
        if let reason = entry["reason"]?.stringValue { text += "  \(reason)" }
        return text
    }

    /// Sends a schedule command through the task command's client (same refusals, same exit status).
    static func send(_ request: JSONValue, location: LocationOptions, whenNotRunning stored: StoredHistory.Read? = nil) throws -> JSONValue {
        try TaskCommand.send(request, location: location, whenNotRunning: stored)
    }
}

struct ScheduleList: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list", abstract: "List the agent's schedules: timing, next and last fire, last result, paused.")

    @Flag(name: .long, help: "Print the schedules as JSON lines.")
    var json = false

    @OptionGroup var location: LocationOptions

    func run() throws {
        let answer = try ScheduleAgentCommands.send(ScheduleListCommand.request(NoFields()), location: location)
        let schedules = answer["schedules"]?.arrayValue ?? []
        if json { return schedules.forEach { print($0.serialized()) } }
        if schedules.isEmpty { print("no schedules (define them under \"schedules\" in settings.json)") }
        if let leads = answer["leads"]?.boolValue {
            let leader = answer["leader"]?.stringValue
            print(leads ? "fleet: this agent (\(leader ?? "?")) leads the schedules: it fires them"
                  : leader.map { "fleet: agent \($0) leads the schedules: it fires them (counts of fires are known there)" } ?? "fleet: no agent leads the schedules now")
        }
        for schedule in schedules { print(ScheduleAgentCommands.line(schedule)) }
    }
}

struct SchedulePause: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pause", abstract: "Pause a schedule: it does not fire until resumed (kept across restarts of the agent).")

    @Argument(help: "The schedule's name in settings.json.")
    var name: String

    @OptionGroup var location: LocationOptions

    func run() throws {
        let answer = try ScheduleAgentCommands.send(SchedulePauseCommand.request(ScheduleReference(name: name)), location: location)
        print(answer["changed"] == false ? "\(name) was already paused" : "\(name) paused")
    }
}

struct ScheduleResume: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "resume", abstract: "Resume a paused schedule from now (fire times while it was paused are recorded as skipped).")

    @Argument(help: "The schedule's name in settings.json.")
    var name: String

    @OptionGroup var location: LocationOptions

    func run() throws {
        let answer = try ScheduleAgentCommands.send(ScheduleResumeCommand.request(ScheduleReference(name: name)), location: location)
        print(answer["changed"] == false ? "\(name) was not paused" : "\(name) resumed; next \(answer["schedule"]?["next_fire"]?.stringValue ?? "none")")
    }
}

struct ScheduleRun: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run", abstract: "Run a schedule's task (or start its workflow) now with its input; prints the run's id (`task show ID` or `workflow show ID` follows it).")

    @Argument(help: "The schedule's name in settings.json.")
    var name: String

    @Flag(name: .long, help: "Print the run as JSON.")
    var json = false

    @OptionGroup var location: LocationOptions

    func run() throws {
        let answer = try ScheduleAgentCommands.send(ScheduleRunCommand.request(ScheduleReference(name: name)), location: location)
        let run = answer["run"] ?? .null
        print(json ? run.serialized() : run["id"]?.stringValue ?? "?")
    }
}

struct ScheduleHistory: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "history",
        abstract: "A schedule's history, newest first: PLANNED ACTUAL OUTCOME RUN (RESULT), and missed or skipped fire times with the reason.",
        discussion: "When the agent is not running, the history is read from its store.")

    @Argument(help: "The schedule's name in settings.json.")
    var name: String

    @Option(name: .long, help: "At most this many lines (1 to 10000; default 100).")
    var limit: Int = 100

    @Flag(name: .long, help: "Print the lines as JSON lines.")
    var json = false

    @OptionGroup var location: LocationOptions

    func validate() throws {
        if !(1...10_000).contains(limit) { throw ValidationError("--limit must be from 1 to 10000, not \(limit)") }
    }

    func run() throws {
        let answer = try ScheduleAgentCommands.send(ScheduleHistoryCommand.request(.init(name: name, limit: limit)),
                                                    location: location, whenNotRunning: StoredHistory.scheduleHistory(name, limit: limit))
        for entry in answer["history"]?.arrayValue ?? [] { print(json ? entry.serialized() : ScheduleAgentCommands.historyLine(entry)) }
    }
}

extension ScheduleAgentCommands {
    /// `schedule next NAME`: the coming fire times of a schedule of the running agent, in its
    /// own time zone, one a line.
    static func printNext(name: String, count: Int, location: LocationOptions) throws {
        let answer = try send(ScheduleNextCommand.request(.init(name: name, count: count)), location: location)
        let times = answer["times"]?.arrayValue ?? []
        if times.isEmpty { FileHandle.standardError.write(Data("note: \(name) has no coming fire time\n".utf8)) }
        for time in times { print(time.stringValue ?? "?") }
    }
}
