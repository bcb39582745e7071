import AgentBase
import AgentRuntime
import AgentWork
import ArgumentParser
import Foundation
import JSONSchema

struct WorkflowCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "workflow",
        abstract: "Run a workflow of the running agent, look at its runs and step logs, approve or reject, signal; define, delete, add a step.",
        discussion: """
        Workflows are defined under "workflows" in settings.json: steps (task, set, condition, \
        parallel, publish, wait_event, wait_signal, approval, chat) run from a persisted step log. A run goes \
        running/waiting → succeeded, failed or cancelled; after a crash it resumes from its last \
        committed step.

        `define`, `delete` and `add-step` change the definitions in settings.json through the agent \
        (checked, written keeping the formatting, reloaded), as `agent-control settings` does.
        """,
        subcommands: [WorkflowList.self, WorkflowRunCommand.self, WorkflowRuns.self, WorkflowShow.self, WorkflowCancel.self,
                      WorkflowApprove.self, WorkflowReject.self, WorkflowSignalling.self, WorkflowDefine.self, WorkflowDelete.self, WorkflowAddStep.self])

    static let statuses = ["running", "waiting", "succeeded", "failed", "cancelled"]

    /// One line per run: ID  WORKFLOW  STATUS  STARTED  (took, error).
    static func line(_ run: JSONValue) -> String {
        var text = [run["id"], run["workflow"], run["status"]].map { $0?.stringValue ?? "?" }.joined(separator: "  ")
        text += "  started \(run["started_at"]?.stringValue ?? "?")"
        if let time = run["duration"]?.numberValue?.doubleValue { text += "  took \(String(format: "%.3f", time)) s" }
        if let error = RunListing.errorPreview(run) { text += "  error: \(TaskCommand.visible(Substring(error)))" }
        return text
    }

    /// `workflow show`: the run, then its step log (one line a step).
    static func details(_ answer: JSONValue) -> String {
        let run = answer["run"] ?? .null
        var lines: [String] = []
        for key in ["id", "workflow", "version", "status", "requested_by", "started_at", "ended_at", "duration", "error"] {
            guard let value = run[key] else { continue }
            lines.append("\(key): \(value.stringValue ?? value.serialized())")
        }
        if let input = run["input"] { lines.append("input: \(input.serialized())") }
        if let variables = run["variables"], variables != .object([:]) { lines.append("variables: \(variables.serialized())") }
        lines.append("steps:")
        for step in answer["steps"]?.arrayValue ?? [] {
            var text = "  \(step["step"]?.stringValue ?? "?")  \(step["kind"]?.stringValue ?? "?")  \(step["status"]?.stringValue ?? "?")"
            text += "  attempt \(step["attempt"]?.numberValue?.intValue ?? 1)"
            if let duration = step["duration"]?.numberValue?.doubleValue { text += "  \(String(format: "%.3f", duration)) s" }
            if let deadline = step["deadline"]?.stringValue, step["ended_at"] == nil { text += "  until \(deadline)" }
            if let approvers = step["approvers"]?.arrayValue, step["status"] == "waiting" {
                text += "  approvers: \(approvers.compactMap(\.stringValue).joined(separator: ", "))"
            }
            if let prompt = step["prompt"]?.stringValue, step["status"] == "waiting" { text += "  \"\(prompt)\"" }
            if let output = step["output"] { text += "  → \(String((output.stringValue ?? output.serialized()).prefix(200)))" }
            if let error = step["error"]?.stringValue { text += "  error: \(error.prefix(200))" }
            lines.append(text)
        }
        return lines.joined(separator: "\n")
    }
}

struct WorkflowList: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list", abstract: "List the workflows the settings define: steps, runs going and waiting.")

    @Flag(name: .long, help: "Print the workflows as JSON lines.")
    var json = false

    @OptionGroup var location: LocationOptions

    func run() throws {
        let answer = try TaskCommand.send(WorkflowListCommand.request(NoFields()), location: location)
        let workflows = answer["workflows"]?.arrayValue ?? []
        if json { return workflows.forEach { print($0.serialized()) } }
        if workflows.isEmpty { print("no workflows (define them under \"workflows\" in settings.json)") }
        for workflow in workflows {
            var line = "\(workflow["name"]?.stringValue ?? "?")  \(workflow["steps"]?.arrayValue?.count ?? 0) steps"
            line += "  running \(workflow["running"]?.numberValue?.intValue ?? 0), waiting \(workflow["waiting"]?.numberValue?.intValue ?? 0)"
            if let description = workflow["description"]?.stringValue, !description.isEmpty { line += "  — \(description)" }
            print(line)
        }
    }
}

struct WorkflowRunCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Start a run of a workflow; with --wait, wait for it and exit 0 only if it succeeded.",
        discussion: """
        The input is checked against the workflow's input schema; an input that fails is refused \
        with every error's JSON pointer. Prints the run's id (with --json, the run). With --wait: \
        waits until the run has finished (approvals and waits included), prints it with its step \
        log, and exits 0 if it succeeded, 1 otherwise.
        """)

    @Argument(help: "The workflow's name in settings.json.")
    var name: String

    @Option(name: .long, help: "The run's input: JSON, or @FILE to read it from a file (default: {}; at most 1 MiB).")
    var input: String?

    @Flag(name: .long, help: "Wait until the run has finished; the exit status says whether it succeeded.")
    var wait = false

    @Flag(name: .long, help: "Print the run as JSON (with --wait: the run and its steps).")
    var json = false

    @OptionGroup var location: LocationOptions

    func run() throws {
        let request = AgentWork.WorkflowRunCommand.Request(name: name, input: try input.map(TaskRunCommand.readInput), wait: wait)
        let answer = try TaskCommand.send(AgentWork.WorkflowRunCommand.request(request), location: location,
                                          timeout: wait ? 366 * 86400 : 30)
        let run = answer["run"] ?? .null
        if json {
            print(wait ? (["run": run, "steps": answer["steps"] ?? []] as JSONValue).serialized() : run.serialized())
        } else if wait {
            print(WorkflowCommand.details(answer))
        } else {
            print(run["id"]?.stringValue ?? "?")
        }
        if wait, run["status"] != "succeeded" { throw ExitCode(AgentLauncher.ExitCode.failure) }
    }
}

struct WorkflowRuns: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "runs", abstract: "List workflow runs, newest first: ID WORKFLOW STATUS STARTED.",
        discussion: """
        When the agent is not running, the runs are read from its store (`workflow show` too). With \
        --json, a member longer than 4 KiB of JSON (an input, output, the variables or an error) is \
        left out and named in the run's "omitted": `workflow show ID --json` prints the whole run.
        """)

    @Option(name: .long, help: "Only runs of this workflow.")
    var workflow: String?

    @Option(name: .long, help: "Only runs with this status: running, waiting, succeeded, failed, cancelled.")
    var status: String?

    @Option(name: .long, help: "At most this many runs (1 to 10000; default 100).")
    var limit: Int = 100

    @Flag(name: .long, help: "Print the runs as JSON lines.")
    var json = false

    @OptionGroup var location: LocationOptions

    func validate() throws {
        if let status, !WorkflowCommand.statuses.contains(status) {
            throw ValidationError("--status must be one of \(WorkflowCommand.statuses.joined(separator: ", ")), not \"\(status)\"")
        }
        if !(1...10_000).contains(limit) { throw ValidationError("--limit must be from 1 to 10000, not \(limit)") }
    }

    func run() throws {
        let request = WorkflowRunsCommand.Request(workflow: workflow, status: status.flatMap(WorkflowRun.Status.init(rawValue:)), limit: limit)
        let filter = WorkflowRunFilter(workflow: workflow, status: request.status, limit: limit)
        let answer = try TaskCommand.send(WorkflowRunsCommand.request(request), location: location,
                                          whenNotRunning: StoredHistory.workflowRuns(filter))
        if let note = answer["note"]?.stringValue { FileHandle.standardError.write(Data("note: \(note)\n".utf8)) }
        for run in answer["runs"]?.arrayValue ?? [] { print(json ? run.serialized() : WorkflowCommand.line(run)) }
    }
}

struct WorkflowShow: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "show", abstract: "Show a workflow run and its step log: each step's status, attempt, duration, output and error.")

    @Argument(help: "The run's id.")
    var runID: String

    @Flag(name: .long, help: "Print the run and its steps as JSON.")
    var json = false

    @OptionGroup var location: LocationOptions

    func run() throws {
        let answer = try TaskCommand.send(WorkflowShowCommand.request(WorkflowRunReference(id: runID)), location: location,
                                          whenNotRunning: StoredHistory.workflowRun(runID))
        print(json ? (["run": answer["run"] ?? .null, "steps": answer["steps"] ?? []] as JSONValue).serialized() : WorkflowCommand.details(answer))
    }
}

struct WorkflowCancel: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cancel", abstract: "Cancel a workflow run: its going task runs are cancelled, its waits and approvals end.")

    @Argument(help: "The run's id.")
    var runID: String

    @Flag(name: .long, help: "Print the run as JSON.")
    var json = false

    @OptionGroup var location: LocationOptions

    func run() throws {
        let answer = try TaskCommand.send(WorkflowCancelCommand.request(WorkflowRunReference(id: runID)), location: location)
        print(json ? (answer["run"] ?? .null).serialized() : WorkflowCommand.line(answer["run"] ?? .null))
    }
}

/// `approve` and `reject`: the same arguments.
struct WorkflowDecision: ParsableArguments {
    @Argument(help: "The run's id.")
    var runID: String

    @Argument(help: "The approval step's id.")
    var step: String

    @Option(name: .long, help: "Why (kept in the step log and the audit).")
    var comment: String?

    @Flag(name: .long, help: "Print the step as JSON.")
    var json = false

    @OptionGroup var location: LocationOptions

    static let discussion = "Over the control socket you act as the agent's operator, who may answer any approval; over HTTP only the step's approvers (users or roles) may."

    func send<C: WorkflowDecisionCommand>(_ command: C.Type) throws {
        let request = AgentWork.WorkflowDecision(id: runID, step: step, comment: comment)
        let answer = try TaskCommand.send(command.request(request), location: location)
        let record = answer["step"] ?? .null
        print(json ? record.serialized() : "\(runID) \(step): \(record["output"]?["decision"]?.stringValue ?? record["status"]?.stringValue ?? "?")")
    }
}

struct WorkflowApprove: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "approve", abstract: "Approve a waiting approval step of a run (recorded with who and the comment).",
        discussion: WorkflowDecision.discussion)

    @OptionGroup var decision: WorkflowDecision

    func run() throws { try decision.send(WorkflowApproveCommand.self) }
}

struct WorkflowReject: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "reject", abstract: "Reject a waiting approval step of a run: the run fails, with the comment.",
        discussion: WorkflowDecision.discussion)

    @OptionGroup var decision: WorkflowDecision

    func run() throws { try decision.send(WorkflowRejectCommand.self) }
}
