import AgentBase
import AgentWork
import ArgumentParser
import Foundation
import JSONSchema

struct TaskAssign: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "assign", abstract: "Assign a queued or retrying run to an executor by hand: it waits for that executor's room, whatever the strategy.")

    @Argument(help: "The run's id.")
    var id: String

    @Option(name: .long, help: "The executor (as `agent-control executor list` shows it).")
    var to: String

    @OptionGroup var location: LocationOptions

    func run() throws {
        let run = try TaskCommand.send(TaskAssignCommand.request(.init(id: id, to: to)), location: location)["run"] ?? .null
        print(TaskCommand.line(run))
    }
}

struct TaskUnassign: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "unassign", abstract: "Undo a manual assignment: the run goes back to the assignment strategy.")

    @Argument(help: "The run's id.")
    var id: String

    @OptionGroup var location: LocationOptions

    func run() throws {
        let run = try TaskCommand.send(TaskUnassignCommand.request(TaskRunReference(id: id)), location: location)["run"] ?? .null
        print(TaskCommand.line(run))
    }
}

struct TaskSetStrategy: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "set-strategy", abstract: "Set the assignment strategy of the agent or of one task (kept in the store across restarts).",
        discussion: """
        best_fit: the highest capability score (the executor's priority_boost for the task, plus 1 \
        when its priority_preference is the run's priority), ties to the least loaded. \
        load_balanced: the lowest running/max_concurrent. round_robin: each executor in turn. \
        priority_first: an executor preferring the run's priority first, then the highest boost. \
        Every strategy only picks an executor with room.
        """)

    @Argument(help: "best_fit, load_balanced, round_robin or priority_first.")
    var strategy: String

    @Option(name: .long, help: "Only this task (default: the agent's strategy).")
    var task: String?

    @OptionGroup var location: LocationOptions

    func validate() throws {
        if AssignmentStrategy(rawValue: strategy) == nil {
            throw ValidationError("STRATEGY must be one of \(AssignmentStrategy.allCases.map(\.rawValue).joined(separator: ", ")), not \"\(strategy)\"")
        }
    }

    func run() throws {
        guard let chosen = AssignmentStrategy(rawValue: strategy) else { throw ValidationError("unknown strategy \"\(strategy)\"") }
        let answer = try TaskCommand.send(TaskSetStrategyCommand.request(.init(strategy: chosen, task: task)), location: location)
        print(ExecutorCommand.strategiesLine(answer["strategies"] ?? .null))
    }
}

struct TaskAssignments: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "assignments", abstract: "List the runs on executors now (running, or waiting for a person) and the runs assigned by hand.")

    @Option(name: .long, help: "Only this executor's runs.")
    var executor: String?

    @Option(name: .long, help: "Only the runs waiting for this person (an HTTP user declared as an executor).")
    var user: String?

    @Flag(name: .long, help: "Print the runs as JSON lines.")
    var json = false

    @OptionGroup var location: LocationOptions

    func run() throws {
        let answer = try TaskCommand.send(TaskAssignmentsCommand.request(.init(executor: executor, user: user)), location: location)
        for run in answer["runs"]?.arrayValue ?? [] {
            print(json ? run.serialized() : TaskCommand.line(run) + "  on \(run["executor"]?.stringValue ?? run["assigned_to"]?.stringValue ?? "?")")
        }
        if let note = answer["note"]?.stringValue { FileHandle.standardError.write(Data("note: \(note)\n".utf8)) }
    }
}

struct TaskComplete: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "complete", abstract: "Complete a run that waits for a person, with its output (checked against the task's output schema).",
        discussion: "Answered once the run's end is written, or kept in the store's run journal (a full disk); refused (unavailable) while the store could do neither, and answered unavailable when it did neither: a kill would have the run wait again.")

    @Argument(help: "The run's id.")
    var id: String

    @Option(name: .long, help: "The run's output: JSON, or @FILE to read it from a file (default: {}; at most 1 MiB).")
    var output: String?

    @OptionGroup var location: LocationOptions

    func run() throws {
        let request = TaskCompleteCommand.Request(id: id, output: try output.map(TaskRunCommand.readInput))
        let run = try TaskCommand.send(TaskCompleteCommand.request(request), location: location)["run"] ?? .null
        print(TaskCommand.line(run))
    }
}

struct TaskFail: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fail", abstract: "Fail a run that waits for a person, saying why (retried if its task's policy allows).",
        discussion: "Refused (unavailable) while the store can neither write the run's end nor keep it in its run journal (a full disk), as `task complete` is.")

    @Argument(help: "The run's id.")
    var id: String

    @Option(name: .long, help: "Why it failed (at most 65,536 characters).")
    var error: String

    @OptionGroup var location: LocationOptions

    func run() throws {
        let run = try TaskCommand.send(TaskFailCommand.request(.init(id: id, error: error)), location: location)["run"] ?? .null
        print(TaskCommand.line(run))
    }
}

struct ExecutorCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "executor",
        abstract: "Look at the running agent's executors, drain and resume them.",
        discussion: """
        Executors are processes of type "executor" in settings.json (name#1 … name#N with \
        "replicas"): the tasks they take, priority_boost and max_concurrent per task, max_concurrent \
        overall, priority_preference, labels; a "user" makes a person one. States: online (has \
        room), busy (full), draining (finishes its runs, takes nothing new), offline (its worker \
        died during a run; held out for a backoff of 1 s doubling to 60 s).
        """,
        subcommands: [ExecutorList.self, ExecutorDrain.self, ExecutorResume.self] + ResourceDefinitionChange.executor)

    /// One line per executor: NAME STATE running/max TASKS (labels) [user].
    static func line(_ executor: JSONValue) -> String {
        var text = "\(executor["name"]?.stringValue ?? "?")  \(executor["state"]?.stringValue ?? "?")"
        text += "  \(executor["running"]?.numberValue?.intValue ?? 0)/\(executor["max_concurrent"]?.numberValue?.intValue ?? 0)"
        text += "  tasks: \((executor["tasks"]?.objectValue ?? [:]).keys.sorted().joined(separator: ", "))"
        let labels = (executor["labels"]?.objectValue ?? [:]).sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value.stringValue ?? "")" }
        if !labels.isEmpty { text += "  labels: \(labels.joined(separator: ", "))" }
        if let user = executor["user"]?.stringValue { text += "  user: \(user)" }
        text += "  assigned \(executor["assigned"]?.numberValue?.intValue ?? 0)"
        return text
    }

    static func strategiesLine(_ strategies: JSONValue) -> String {
        var text = "strategy: \(strategies["agent"]?.stringValue ?? "?")"
        let tasks = (strategies["tasks"]?.objectValue ?? [:]).sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value.stringValue ?? "?")" }
        if !tasks.isEmpty { text += "; tasks: \(tasks.joined(separator: ", "))" }
        return text
    }
}

struct ExecutorList: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list", abstract: "List the executors: NAME STATE RUNNING/MAX TASKS; then the strategies and the queue by priority.")

    @Flag(name: .long, help: "Print the whole answer as JSON.")
    var json = false

    @OptionGroup var location: LocationOptions

    func run() throws {
        let answer = try TaskCommand.send(ExecutorListCommand.request(NoFields()), location: location)
        if json { return print(answer.serialized()) }
        let executors = answer["executors"]?.arrayValue ?? []
        if executors.isEmpty { print("no executors (declare processes of type \"executor\"; without them each task runs on its own worker)") }
        for executor in executors { print(ExecutorCommand.line(executor)) }
        print(ExecutorCommand.strategiesLine(answer["strategies"] ?? .null))
        let queued = (answer["statistics"]?["queued_by_priority"]?.objectValue ?? [:])
        print("queued: " + TaskRun.Priority.allCases.reversed().map { "\($0.rawValue) \(queued[$0.rawValue]?.numberValue?.intValue ?? 0)" }.joined(separator: ", "))
    }
}

struct ExecutorDrain: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "drain", abstract: "Drain an executor: it finishes the runs it has and takes nothing new until resumed (kept across restarts).")

    @Argument(help: "The executor's name.")
    var name: String

    @OptionGroup var location: LocationOptions

    func run() throws {
        print(ExecutorCommand.line(try TaskCommand.send(ExecutorDrainCommand.request(ExecutorReference(name: name)), location: location)["executor"] ?? .null))
    }
}

struct ExecutorResume: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "resume", abstract: "Resume a drained executor: it takes runs again.")

    @Argument(help: "The executor's name.")
    var name: String

    @OptionGroup var location: LocationOptions

    func run() throws {
        print(ExecutorCommand.line(try TaskCommand.send(ExecutorResumeCommand.request(ExecutorReference(name: name)), location: location)["executor"] ?? .null))
    }
}
