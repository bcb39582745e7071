import AgentBase
import AgentCore
import AgentRuntime
import AgentWork
import ArgumentParser
import Foundation
import JSONSchema

struct TaskCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "task",
        abstract: "Run a task of the running agent and look at its runs.",
        discussion: """
        Tasks are defined under "tasks" in settings.json: a "command" (any program) or a module's \
        task handler, with a timeout, retries and how many may run at once. A run goes queued → \
        running → succeeded, failed, timed_out or cancelled (retrying in between when its retries \
        allow); a run interrupted by the agent's stop or death runs again, not counted against its \
        retries, and ends abandoned past the task's max_interruptions. Runs are kept in the store (without it, in memory until the agent stops).
        """,
        subcommands: [TaskRunCommand.self, TaskList.self, TaskRuns.self, TaskShow.self, TaskRerun.self, TaskCancel.self,
                      TaskAssign.self, TaskUnassign.self, TaskAssignments.self, TaskSetStrategy.self, TaskComplete.self, TaskFail.self]
            + ResourceDefinitionChange.task)

    /// Sends a task command and returns the agent's answer; a refusal is printed and exits 1.
    /// A command that reads history passes `stored`: when the agent is not running, the
    /// answer is read from its store instead.
    static func send(_ request: JSONValue, location: LocationOptions, timeout: Double = 30,
                     whenNotRunning stored: StoredHistory.Read? = nil) throws -> JSONValue {
        let options = try location.options(needsSettings: false)
        let daemon = AgentDaemon(launcher: AgentLauncher(options: options))
        let answer: JSONValue
        do {
            answer = try ControlClient.send(request, paths: daemon.paths, timeout: timeout)
        } catch {
            guard error.isNotRunning, let stored, let read = try StoredHistory.answer(stored, settingsFile: options.settingsPath) else {
                throw ExitCode(AgentDaemon.fail(error))
            }
            answer = read
        }
        guard answer["ok"] == true else {
            var text = answer["error"]?.stringValue ?? "the agent refused the request"
            if let errors = answer["errors"]?.arrayValue, errors.count > 1 {
                text = "the input does not match the task's input schema:\n" + errors.map { "  \($0["pointer"]?.stringValue ?? ""): \($0["message"]?.stringValue ?? "")" }.joined(separator: "\n")
            }
            throw ExitCode(AgentDaemon.fail(text))
        }
        return answer
    }

    /// Prints a run `task run` or `task rerun` queued: as JSON, its details when it was waited
    /// for, else its id; a waited-for run that did not succeed exits 1.
    static func report(_ run: JSONValue, json: Bool, waited: Bool) throws {
        if json {
            print(run.serialized())
        } else if waited {
            print(details(run))
        } else {
            print(run["id"]?.stringValue ?? "?")
        }
        if waited, run["status"] != "succeeded" { throw ExitCode(AgentLauncher.ExitCode.failure) }
    }

    /// One line per run: ID  TASK  STATUS  ATTEMPT  QUEUED  (ERROR).
    static func line(_ run: JSONValue) -> String {
        var text = [run["id"], run["task"], run["status"]].map { $0?.stringValue ?? "?" }.joined(separator: "  ")
        text += "  attempt \(run["attempt"]?.numberValue?.intValue ?? 0)  queued \(run["queued_at"]?.stringValue ?? "?")"
        if let time = run["execution_time"]?.numberValue?.doubleValue { text += "  took \(String(format: "%.3f", time)) s" }
        // A command's error quotes its stderr: no escape sequence or line break reaches the terminal.
        if let error = RunListing.errorPreview(run) { text += "  error: \(visible(Substring(error)))" }
        return text
    }

    /// `task show`: every field, one a line.
    static func details(_ run: JSONValue) -> String {
        var lines: [String] = []
        for key in ["id", "task", "status", "attempt", "interruptions", "priority", "requested_by", "rerun_of", "queued_at", "not_before",
                    "started_at", "ended_at", "next_attempt_at", "execution_time", "exit_code", "signal", "executor", "agent", "assigned_to", "error"] {
            guard let value = run[key] else { continue }
            // An error may quote what a program wrote: no escape sequence reaches the terminal.
            lines.append("\(key): \(visible(Substring(value.stringValue ?? value.serialized())))")
        }
        if let input = run["input"] { lines.append("input: \(input.serialized())") }
        if let output = run["output"] { lines.append("output: \(TerminalText.shown(output.stringValue ?? output.serialized()))") }
        if let usage = run["usage"], let cpu = usage["cpu_seconds"]?.numberValue {
            let peak = usage["memory_peak_bytes"]?.numberValue.map { ", memory peak \($0) bytes" } ?? ""
            lines.append("usage: cpu \(cpu) s\(peak)")
        }
        if let tail = run["stderr_tail"]?.stringValue, !tail.isEmpty {
            lines.append("stderr (last lines):\n" + tail.split(separator: "\n", omittingEmptySubsequences: false).map(visible).joined(separator: "\n"))
        }
        return lines.joined(separator: "\n")
    }
}

struct TaskRunCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Queue a run of a task (now, or --at a time); with --wait, wait for it and exit 0 only if it succeeded.",
        discussion: """
        The input is checked against the task's input schema; an input that fails is refused with \
        every error's JSON pointer. Prints the run's id (with --json, the run). With --wait: waits \
        until the run has finished, prints it, and exits 0 if it succeeded, 1 if it failed, timed \
        out or was cancelled.
        """)

    @Argument(help: "The task's name in settings.json.")
    var name: String

    @Option(name: .long, help: "The run's input: JSON, or @FILE to read it from a file (default: {}; at most 1 MiB).")
    var input: String?

    @Option(name: .long, help: "low, normal, high or critical (default: normal).")
    var priority: String?

    @Option(name: .long, help: "Not before this time: \(TaskCoordinator.timeForm); refused outside these bounds.")
    var at: String?

    @Option(name: .long, help: "A label the run's executor must carry, as KEY=VALUE (repeat for several; besides the task's \"require\").")
    var require: [String] = []

    @Flag(name: .long, help: "Wait until the run has finished; the exit status says whether it succeeded.")
    var wait = false

    @Flag(name: .long, help: "Print the run as JSON.")
    var json = false

    @OptionGroup var location: LocationOptions

    func validate() throws {
        if let priority, TaskRun.Priority(rawValue: priority) == nil {
            throw ValidationError("--priority must be low, normal, high or critical, not \"\(priority)\"")
        }
        // Checked here, as the agent checks it: a time it cannot read is a usage error (64),
        // not the agent's refusal (1).
        if let at, TaskCoordinator.parseTime(at) == nil {
            throw ValidationError("--at must be \(TaskCoordinator.timeForm), not \"\(at)\"")
        }
        for label in require where !label.contains("=") || label.hasPrefix("=") {
            throw ValidationError("--require takes KEY=VALUE (e.g. gpu=yes), not \"\(label)\"")
        }
    }

    func run() throws {
        var labels: [String: String] = [:]
        for label in require {
            let parts = label.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            labels[String(parts[0])] = parts.count > 1 ? String(parts[1]) : ""
        }
        let request = AgentWork.TaskRunCommand.request(.init(name: name, input: try input.map(Self.readInput),
                                                   priority: priority.flatMap(TaskRun.Priority.init(rawValue:)), at: at, wait: wait,
                                                   require: labels.isEmpty ? nil : labels))
        // A waited-for run may take as long as it takes: the agent answers when it ends.
        let answer = try TaskCommand.send(request, location: location, timeout: wait ? 366 * 86400 : 30)
        try TaskCommand.report(answer["run"] ?? .null, json: json, waited: wait)
    }

    /// `--input`: JSON text, or `@FILE`.
    static func readInput(_ text: String) throws -> JSONValue { try readInput(text, option: "--input") }

    /// An option's JSON (`--input`, `--payload`): JSON text, or `@FILE`.
    static func readInput(_ text: String, option: String) throws -> JSONValue {
        var source = option
        var data = Data(text.utf8)
        if text.hasPrefix("@") {
            let path = String(text.dropFirst())
            source = path
            data = try ArgumentFile.read(path, what: "\(option) @\(path)")
        }
        do {
            return try JSONValue.parse(data)
        } catch {
            throw ValidationError("\(source) is not valid JSON at line \(error.line), column \(error.column): \(error.message)")
        }
    }
}

struct TaskList: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list", abstract: "List the tasks the settings define, with their queued and running runs.")

    @Flag(name: .long, help: "Print the tasks as JSON lines.")
    var json = false

    @OptionGroup var location: LocationOptions

    func run() throws {
        let answer = try TaskCommand.send(TaskListCommand.request(NoFields()), location: location)
        let tasks = answer["tasks"]?.arrayValue ?? []
        if json { return tasks.forEach { print($0.serialized()) } }
        if tasks.isEmpty { print("no tasks (define them under \"tasks\" in settings.json)") }
        for task in tasks {
            var line = "\(task["name"]?.stringValue ?? "?")  \(task["type"]?.stringValue ?? "?")"
            line += "  queued \(task["queued"]?.numberValue?.intValue ?? 0), running \(task["running"]?.numberValue?.intValue ?? 0)"
            if let description = task["description"]?.stringValue, !description.isEmpty { line += "  — \(description)" }
            print(line)
        }
    }
}

struct TaskRuns: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "runs", abstract: "List runs, newest first: ID TASK STATUS ATTEMPT QUEUED.",
        discussion: """
        Without a store, only the runs kept in memory are listed (and the output says so). When the \
        agent is not running, the runs are read from its store (`task show` too). With --json, a \
        member longer than 4 KiB of JSON (an input, output or error) is left out and named in the \
        run's "omitted": `task show ID --json` prints the whole run.
        """)

    @Option(name: .long, help: "Only runs of this task.")
    var task: String?

    @Option(name: .long, help: "Only runs with this status: queued, running, retrying, succeeded, failed, timed_out, cancelled, abandoned.")
    var status: String?

    @Option(name: .long, help: "At most this many runs (1 to 10000; default 100).")
    var limit: Int = 100

    @Flag(name: .long, help: "Print the runs as JSON lines.")
    var json = false

    @OptionGroup var location: LocationOptions

    func validate() throws {
        if let status, TaskRun.Status(rawValue: status) == nil {
            throw ValidationError("--status must be one of \(TaskRun.Status.allCases.map(\.rawValue).joined(separator: ", ")), not \"\(status)\"")
        }
        if !(1...10_000).contains(limit) { throw ValidationError("--limit must be from 1 to 10000, not \(limit)") }
    }

    func run() throws {
        let filter = RunFilter(task: task, status: status.flatMap(TaskRun.Status.init(rawValue:)), limit: limit)
        let request = TaskRunsCommand.request(.init(task: task, status: filter.status, limit: limit))
        let answer = try TaskCommand.send(request, location: location, whenNotRunning: StoredHistory.taskRuns(filter))
        if let note = answer["note"]?.stringValue { FileHandle.standardError.write(Data("note: \(note)\n".utf8)) }
        for run in answer["runs"]?.arrayValue ?? [] { print(json ? run.serialized() : TaskCommand.line(run)) }
    }
}

struct TaskShow: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "show", abstract: "Show one run: status, times, input, output, error, exit status, the tail of stderr, and every attempt.",
        discussion: """
        Each attempt is listed with its own times, status, exit status or error, the tails of its \
        stderr and stdout, and the executor and agent that ran it (the first and the newest 99 \
        attempts are kept, the newest 10 with their tails). --json prints the run with its \
        "attempts".
        """)

    @Argument(help: "The run's id.")
    var id: String

    @Flag(name: .long, help: "Print the run as JSON.")
    var json = false

    @OptionGroup var location: LocationOptions

    func run() throws {
        let answer = try TaskCommand.send(TaskShowCommand.request(TaskRunReference(id: id)), location: location,
                                          whenNotRunning: StoredHistory.taskRun(id))
        guard json else { return print(TaskCommand.details(answer["run"] ?? .null) + "\n" + TaskCommand.attemptLines(answer)) }
        // The run with its attempts.
        var run = answer["run"]?.objectValue ?? [:]
        run["attempts"] = answer["attempts"] ?? []
        if let missing = answer["attempts_not_kept"] { run["attempts_not_kept"] = missing }
        print(JSONValue.object(run).serialized())
    }
}

struct TaskRerun: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rerun", abstract: "Queue a new run of a run's task with the same input and priority; prints the new run's id (with --wait, the run once it has finished).")

    @Argument(help: "The run's id.")
    var id: String

    @Flag(name: .long, help: "Wait until the new run has finished; the exit status says whether it succeeded.")
    var wait = false

    @Flag(name: .long, help: "Print the new run as JSON.")
    var json = false

    @OptionGroup var location: LocationOptions

    func run() throws {
        // A waited-for run may take as long as it takes: the agent answers when it ends.
        let answer = try TaskCommand.send(TaskRerunCommand.request(.init(id: id, wait: wait)), location: location, timeout: wait ? 366 * 86400 : 30)
        try TaskCommand.report(answer["run"] ?? .null, json: json, waited: wait)
    }
}

struct TaskCancel: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cancel", abstract: "Cancel a queued, retrying or running run (a running one's whole process tree is killed).",
        discussion: "Answered once the run's end is written, or kept in the store's run journal (a full disk); refused (unavailable) while the store could do neither, and answered unavailable when it did neither: a kill would have the run go on.")

    @Argument(help: "The run's id.")
    var id: String

    @OptionGroup var location: LocationOptions

    func run() throws {
        let run = try TaskCommand.send(TaskCancelCommand.request(TaskRunReference(id: id)), location: location, timeout: 60)["run"] ?? .null
        print(TaskCommand.line(run))
    }
}
