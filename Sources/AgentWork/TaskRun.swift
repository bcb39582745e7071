import AgentBase
import AgentSupervision
import Foundation
import JSONSchema

/// One run of a task: what was asked, and how far it got. Kept by the ``TaskCoordinator``
/// while it is unfinished, recorded in a ``RunStore`` at every change.
///
/// A run goes `queued → running → succeeded | failed | timed_out | cancelled`; a failed or
/// timed-out attempt with retries left goes `retrying` (with the time of the next attempt) and
/// then `running` again, with `attempt` one higher. An attempt interrupted from outside the
/// work (the agent stopped or died, its executor's worker died) is counted in
/// `interruptions`, not against the retry policy: the run goes `retrying`, due at once, until
/// one attempt completes — or ends `abandoned` once its interruptions pass the task's
/// `max_interruptions`.
public struct TaskRun: Sendable, Equatable {
    public enum Status: String, Sendable, CaseIterable {
        case queued, running, retrying, succeeded, failed
        case timedOut = "timed_out"
        case cancelled
        /// Interrupted more often than its task's `max_interruptions` allows.
        case abandoned

        /// Nothing more happens to the run.
        public var isFinished: Bool {
            switch self {
            case .succeeded, .failed, .timedOut, .cancelled, .abandoned: true
            case .queued, .running, .retrying: false
            }
        }
    }

    /// The order of the queue: `critical` before `high` before `normal` before `low`.
    public enum Priority: String, Sendable, CaseIterable, Comparable {
        case low, normal, high, critical

        package var rank: Int {
            switch self {
            case .low: 0
            case .normal: 1
            case .high: 2
            case .critical: 3
            }
        }

        public static func < (a: Priority, b: Priority) -> Bool { a.rank < b.rank }
    }

    /// Who asked for the run.
    public enum Origin: String, Sendable, CaseIterable {
        case cli, http, event, schedule, workflow, rerun
    }

    /// Unique, stable across attempts.
    public var id: String
    /// The key handlers and commands see to make their effect happen once
    /// (`AGENT_TASK_IDEMPOTENCY_KEY`, `TaskContext.idempotencyKey`): the run's id unless the
    /// requester gives one — a workflow step gives "<workflow run>/<step>/<step attempt>", so
    /// that a step run again after a crash keeps its key. Stable across the run's attempts.
    public var idempotencyKey: String
    public var task: String
    public var input: JSONValue {
        get { held.value }
        set { held = RunInput(newValue) }
    }
    /// The input as memory holds it: a large one whose text is known, as the text alone
    /// (``RunInput``).
    package var held: RunInput
    /// ``input`` as compact JSON text when it was made off the loop, where the run was asked
    /// for: the run journal's line, the store and the runner (a command's stdin, a handler's
    /// frame) take it as it is. Writing a 1 MiB input of small numbers twice on the loop held it
    /// ~15 ms. Setting it lets a large input be held as its text alone.
    package var inputText: InputText {
        get { InputText(held.text) }
        set {
            if let bytes = newValue.bytes { held.setText(bytes) } else { held.dropText() }
        }
    }
    public var priority: Priority
    /// Not started before this time (seconds since the epoch; nil: as soon as possible).
    public var notBefore: Double?
    public var status: Status
    /// The attempt running or last run (0 before the first starts): every attempt begun,
    /// those interrupted included.
    public var attempt: Int
    /// Attempts interrupted from outside the work (the agent stopped or died, its executor's
    /// worker died). They do not count against the retry policy, which compares
    /// `attempt - interruptions`: the attempts the work itself ended.
    public var interruptions = 0
    /// When the next attempt is due (`retrying`).
    public var nextAttemptAt: Double?
    public var output: JSONValue?
    public var error: String?
    public var exitCode: Int32?
    public var signal: String?
    public var stderrTail: String?
    /// What the last attempt's processes used (command runs in a cgroup).
    public var usage: ResourceUsage?
    public var requestedBy: Origin
    /// The run this one repeats (`rerun`).
    public var rerunOf: String?
    /// Seconds since the epoch.
    public var queuedAt: Double
    public var startedAt: Double?
    public var endedAt: Double?
    /// Seconds the last attempt took.
    public var executionTime: Double?
    /// The executor of the running or last attempt (a declared executor; nil: the task's own).
    public var executor: String?
    /// The executor a person chose for it (`task assign`): it waits for that one's room.
    public var assignedTo: String?
    /// Labels the executor must carry, besides the task's (`task run --require`).
    public var require: [String: String] = [:]
    /// In a fleet: the agent the task's assignment strategy chose when the run was queued. It
    /// claims the run at once; another agent only once ``assignmentHold`` has passed.
    public var assignedAgent: String?
    /// Seconds after the run is due that it waits for ``assignedAgent`` alone.
    public var assignmentHold: Double?
    /// In a fleet: the agent that carried out the running or last attempt.
    public var agent: String?
    /// How many runs (tasks' or workflows'), each started by an event of the one before, led
    /// to this one (0: not started by a run's event); its events carry it, see
    /// ``WorkflowEngine/deepestCascade``.
    public var cascade = 0
    /// Arrival order within the agent's life; ties the queue order (not stored).
    package var sequence: Int = 0
    /// The claim under which this agent holds the run, in a fleet's shared queue (not stored
    /// in the record: the store keeps it in columns of its own). A change carrying it is
    /// written only while it is still the run's claim (``RunStore/record(_:)``).
    public var claim: RunClaim?
    /// The running or last attempt's own record (not in the run's record: the store writes it
    /// beside the run, in its table of attempts, see ``TaskAttempt``). Nil before the first
    /// attempt, and in a run read back from the store.
    public var attemptRecord: TaskAttempt?

    public init(id: String, task: String, input: JSONValue = .object([:]), priority: Priority = .normal, notBefore: Double? = nil,
                requestedBy: Origin, queuedAt: Double = Date().timeIntervalSince1970) {
        self.id = id
        idempotencyKey = id
        self.task = task
        held = RunInput(input)
        self.priority = priority
        self.notBefore = notBefore
        status = .queued
        attempt = 0
        self.requestedBy = requestedBy
        self.queuedAt = queuedAt
    }
}

/// A run's input as compact JSON text, kept beside the input it was made of (``TaskRun/inputText``):
/// empty once the input changes. Not part of what a run is: runs are equal whatever it holds.
package struct InputText: Sendable, Equatable {
    package var bytes: [UInt8]?

    package init(_ bytes: [UInt8]? = nil) { self.bytes = bytes }

    package static func == (_: InputText, _: InputText) -> Bool { true }
}

extension TaskRun {
    /// The run as the commands and the store show it.
    public var json: JSONValue { shown(withLargeInput: true) }

    /// The run as the commands show it; an input held as its text alone (``RunInput``) only
    /// with `withLargeInput`, else named in `"omitted"` as a list does: read into a value on the
    /// loop for every answer, a MiB of input held it for milliseconds.
    package func shown(withLargeInput: Bool) -> JSONValue {
        let leftOut = !withLargeInput && held.isTextOnly
        var object: JSONObject = [
            "id": .string(id), "task": .string(task), "input": leftOut ? .null : input, "priority": .string(priority.rawValue),
            "status": .string(status.rawValue), "attempt": .number(JSONNumber(attempt)),
            "requested_by": .string(requestedBy.rawValue), "queued_at": .string(Self.iso(queuedAt)),
        ]
        if interruptions > 0 { object["interruptions"] = .number(JSONNumber(interruptions)) }
        if let notBefore { object["not_before"] = .string(Self.iso(notBefore)) }
        if let nextAttemptAt { object["next_attempt_at"] = .string(Self.iso(nextAttemptAt)) }
        if let output { object["output"] = output }
        if let error { object["error"] = .string(error) }
        if let exitCode { object["exit_code"] = .number(JSONNumber(Int(exitCode))) }
        if let signal { object["signal"] = .string(signal) }
        if let stderrTail { object["stderr_tail"] = .string(stderrTail) }
        if let usage { object["usage"] = usage.json }
        if let rerunOf { object["rerun_of"] = .string(rerunOf) }
        object["idempotency_key"] = .string(idempotencyKey)
        if let startedAt { object["started_at"] = .string(Self.iso(startedAt)) }
        if let endedAt { object["ended_at"] = .string(Self.iso(endedAt)) }
        if let executionTime { object["execution_time"] = .number(JSONNumber((executionTime * 1e6).rounded() / 1e6)) }
        if let executor { object["executor"] = .string(executor) }
        if let assignedTo { object["assigned_to"] = .string(assignedTo) }
        if !require.isEmpty { object["require"] = ExecutorSettings.json(require) }
        if let assignedAgent { object["assigned_agent"] = .string(assignedAgent) }
        if let assignmentHold { object["assignment_hold"] = .number(JSONNumber(assignmentHold)) }
        if let agent { object["agent"] = .string(agent) }
        if leftOut {
            object["input"] = nil
            object["omitted"] = ["input"]
        }
        return .object(object)
    }

    /// The record as the SQLite store keeps it (times as numbers, so that it reads back exactly).
    package var storedJSON: JSONValue { storedRecord(withInput: true) }

    /// The record as the stores keep it, as JSON text: an input held as its text alone is put
    /// in as it is, not read and written again.
    package var storedBytes: [UInt8] {
        guard let input = held.text else { return storedJSON.serializedBytes(capacity: 512) }
        return Self.appending(input, as: "input", to: storedRecord(withInput: false))
    }

    /// `record`'s text with `"name": text` as its last member (`text` is JSON already).
    package static func appending(_ text: [UInt8], as name: String, to record: JSONValue) -> [UInt8] {
        var bytes = record.serializedBytes(capacity: 512 + text.count)
        // `{…}` → `{…,"input":INPUT}`: a record always has members (its id first of all).
        bytes.removeLast()
        bytes += Array(",\"\(name)\":".utf8)
        bytes += text
        bytes.append(UInt8(ascii: "}"))
        return bytes
    }

    /// The stored record, without its input when `withInput` is false.
    package func storedRecord(withInput: Bool) -> JSONValue {
        var object: JSONObject = [
            "id": .string(id), "task": .string(task), "priority": .string(priority.rawValue),
            "status": .string(status.rawValue), "attempt": .number(JSONNumber(attempt)),
            "requested_by": .string(requestedBy.rawValue), "queued_at": .number(JSONNumber(queuedAt)),
        ]
        if interruptions > 0 { object["interruptions"] = .number(JSONNumber(interruptions)) }
        if let notBefore { object["not_before"] = .number(JSONNumber(notBefore)) }
        if let nextAttemptAt { object["next_attempt_at"] = .number(JSONNumber(nextAttemptAt)) }
        if let output { object["output"] = output }
        if let error { object["error"] = .string(error) }
        if let exitCode { object["exit_code"] = .number(JSONNumber(Int(exitCode))) }
        if let signal { object["signal"] = .string(signal) }
        if let stderrTail { object["stderr_tail"] = .string(stderrTail) }
        if let usage { object["usage"] = usage.json }
        if let rerunOf { object["rerun_of"] = .string(rerunOf) }
        if idempotencyKey != id { object["idempotency_key"] = .string(idempotencyKey) }
        if let startedAt { object["started_at"] = .number(JSONNumber(startedAt)) }
        if let endedAt { object["ended_at"] = .number(JSONNumber(endedAt)) }
        if let executionTime { object["execution_time"] = .number(JSONNumber(executionTime)) }
        if let executor { object["executor"] = .string(executor) }
        if let assignedTo { object["assigned_to"] = .string(assignedTo) }
        if !require.isEmpty { object["require"] = ExecutorSettings.json(require) }
        if let assignedAgent { object["assigned_agent"] = .string(assignedAgent) }
        if let assignmentHold { object["assignment_hold"] = .number(JSONNumber(assignmentHold)) }
        if let agent { object["agent"] = .string(agent) }
        if cascade > 0 { object["cascade"] = .number(JSONNumber(cascade)) }
        if withInput { object["input"] = input }
        return .object(object)
    }

    /// Reads a record written by ``storedJSON``; nil when it is not one (an edited store).
    package init?(stored value: JSONValue) {
        guard let id = value["id"]?.stringValue, let task = value["task"]?.stringValue,
              let status = value["status"]?.stringValue.flatMap(Status.init(rawValue:)),
              let priority = value["priority"]?.stringValue.flatMap(Priority.init(rawValue:)),
              let origin = value["requested_by"]?.stringValue.flatMap(Origin.init(rawValue:)),
              let queuedAt = value["queued_at"]?.numberValue?.doubleValue else { return nil }
        self.init(id: id, task: task, input: value["input"] ?? .object([:]), priority: priority,
                  notBefore: value["not_before"]?.numberValue?.doubleValue, requestedBy: origin, queuedAt: queuedAt)
        self.status = status
        attempt = value["attempt"]?.numberValue?.intValue ?? 0
        // A record written before interruptions were counted has none.
        interruptions = max(value["interruptions"]?.numberValue?.intValue ?? 0, 0)
        nextAttemptAt = value["next_attempt_at"]?.numberValue?.doubleValue
        output = value["output"]
        error = value["error"]?.stringValue
        exitCode = value["exit_code"]?.numberValue?.intValue.flatMap(Int32.init(exactly:))
        signal = value["signal"]?.stringValue
        stderrTail = value["stderr_tail"]?.stringValue
        usage = ResourceUsage(json: value["usage"])
        rerunOf = value["rerun_of"]?.stringValue
        idempotencyKey = value["idempotency_key"]?.stringValue ?? id
        startedAt = value["started_at"]?.numberValue?.doubleValue
        endedAt = value["ended_at"]?.numberValue?.doubleValue
        executionTime = value["execution_time"]?.numberValue?.doubleValue
        executor = value["executor"]?.stringValue
        assignedTo = value["assigned_to"]?.stringValue
        require = ExecutorSettings.labels(value["require"])
        assignedAgent = value["assigned_agent"]?.stringValue
        assignmentHold = value["assignment_hold"]?.numberValue?.doubleValue
        agent = value["agent"]?.stringValue
        cascade = value["cascade"]?.numberValue?.intValue ?? 0
    }

    /// Holds a large input as its text alone (a run read back from a store holds its value):
    /// written here, off the loop, once.
    package mutating func holdLargeInputAsText() {
        guard held.text == nil, input.serializedLength(atMost: RunInput.textOnlyFrom - 1) == nil else { return }
        inputText = InputText(input.serializedBytes())
    }

    /// Until when the run waits for its ``assignedAgent`` alone (nil: any agent may claim it
    /// when due). Its first attempt only: a retry or a rescue goes to whichever agent has room.
    package var assignmentHoldUntil: Double? {
        guard assignedAgent != nil, let assignmentHold, attempt == 0 else { return nil }
        return (notBefore ?? queuedAt) + assignmentHold
    }

    /// `2026-01-31T12:00:00.123Z`: rounded to the millisecond, any year from 1 to 9999.
    package static func iso(_ seconds: Double) -> String { ConsoleOutput.timestamp(seconds: seconds, full: true) }
}

extension TaskRun {
    /// When the run may start: its next attempt, its not-before time, else its arrival. The
    /// queue's second key (after the priority).
    package var due: Double { nextAttemptAt ?? notBefore ?? queuedAt }
}

extension TaskRun {
    /// The workflow run this run is a step of: a workflow step's idempotency key is
    /// "<workflow run id>/<step id>/<step attempt>" (nil for any other run).
    package var workflowRunID: String? {
        guard requestedBy == .workflow, let slash = idempotencyKey.firstIndex(of: "/"), slash > idempotencyKey.startIndex else { return nil }
        return String(idempotencyKey[..<slash])
    }
}
