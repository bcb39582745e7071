import AgentBase
import AgentSupervision
import JSONSchema

/// One attempt of a task run, a record of its own: when it started and ended, how it ended
/// (exit status or error), the tails of its stderr and stdout, and which executor and agent
/// carried it out. The ``TaskCoordinator`` keeps the running or last attempt on the run
/// (``TaskRun/attemptRecord``); the ``RunStore`` writes it beside the run, in the same
/// transaction, and keeps every attempt (``RunStore/attempts(of:)``) until the run goes.
///
/// Bounded per run: the first attempt and the newest ``keptAttempts`` - 1 are kept, and only
/// the newest ``keptTails`` keep their tails (each tail as bounded as the run's `stderr_tail`).
public struct TaskAttempt: Sendable, Equatable {
    public enum Status: String, Sendable, CaseIterable, Codable {
        case running, succeeded, failed
        case timedOut = "timed_out"
        case cancelled
        /// Ended from outside the work (the agent stopped or died, its executor's worker died,
        /// its agent lost the claim): not counted against the retry policy.
        case interrupted
    }

    /// From 1 (``TaskRun/attempt`` when it began).
    public var number: Int
    public var status: Status
    /// Seconds since the epoch.
    public var startedAt: Double?
    public var endedAt: Double?
    public var exitCode: Int32?
    public var signal: String?
    public var error: String?
    /// The end of what it wrote on stderr and stdout (a command's), as bounded as the run's tail.
    public var stderrTail: String?
    public var stdoutTail: String?
    /// The declared executor it ran on (nil: the task's own).
    public var executor: String?
    /// The agent that ran it: a fleet agent's id, else the agent's name (its folder's).
    public var agent: String?
    public var usage: ResourceUsage?
    /// Made from the run's own record: the store has no record of this attempt (the run was
    /// recorded before attempts were, or its agent did not write the attempt before it ended).
    public var fromRunRecord = false

    /// Attempts kept per run: the first and the newest `keptAttempts - 1`.
    public static let keptAttempts = 100
    /// The newest attempts of a run that keep their stderr and stdout tails.
    public static let keptTails = 10

    public init(number: Int, status: Status = .running, startedAt: Double?, executor: String? = nil, agent: String? = nil) {
        self.number = number
        self.status = status
        self.startedAt = startedAt
        self.executor = executor
        self.agent = agent
    }

    /// The attempt ended as `outcome` says, at `time`.
    package mutating func end(_ outcome: TaskRunOutcome, at time: Double) {
        status = switch outcome.status {
        case .succeeded: .succeeded
        case .failed: .failed
        case .timedOut: .timedOut
        case .cancelled: .cancelled
        case .interrupted: .interrupted
        }
        endedAt = time
        exitCode = outcome.exitCode
        signal = outcome.signal
        error = outcome.error
        stderrTail = outcome.stderrTail
        stdoutTail = outcome.stdoutTail
        usage = outcome.usage
    }

    /// Ended from outside the work, with `error` saying how.
    package mutating func interrupt(_ error: String, at time: Double?) {
        status = .interrupted
        endedAt = time
        self.error = error
    }
}

extension TaskAttempt {
    /// The attempt a run's record tells of (its running or last one): for a run written before
    /// attempts were recorded, or an attempt whose own record is missing.
    package init(fromRun run: TaskRun) {
        self.init(number: run.attempt, status: Self.status(of: run), startedAt: run.startedAt, executor: run.executor, agent: run.agent)
        if status != .running {
            endedAt = run.endedAt ?? run.startedAt.flatMap { start in run.executionTime.map { start + $0 } }
            exitCode = run.exitCode
            signal = run.signal
            error = run.error
            stderrTail = run.stderrTail
            usage = run.usage
        }
        fromRunRecord = true
    }

    private static func status(of run: TaskRun) -> Status {
        switch run.status {
        case .running: .running
        case .succeeded: .succeeded
        case .failed: .failed
        case .timedOut: .timedOut
        case .cancelled: .cancelled
        case .abandoned, .queued: .interrupted
        case .retrying:
            run.error?.hasPrefix("interrupted") == true ? .interrupted : run.error?.hasPrefix("timed out") == true ? .timedOut : .failed
        }
    }

    /// The attempts to show of `run`: those stored (`stored`, any order), as the run's record
    /// completes them. An attempt past the run's (given back before it began) is left out; one
    /// still `running` before the run's last, or after the run stopped running, never wrote its
    /// end (its agent stopped or lost its claim): interrupted. The run's own attempt is made from its record when missing (a
    /// run recorded before attempts were; a fleet's claimed attempt written at its end).
    package static func shown(_ stored: [TaskAttempt], of run: TaskRun) -> [TaskAttempt] {
        var byNumber: [Int: TaskAttempt] = [:]
        for attempt in stored where attempt.number >= 1 && attempt.number <= run.attempt {
            var attempt = attempt
            if attempt.status == .running, attempt.number < run.attempt || run.status != .running {
                attempt.interrupt(attempt.error ?? "no end was recorded: the agent running it stopped or lost its claim while it ran", at: nil)
            }
            byNumber[attempt.number] = attempt
        }
        if run.attempt >= 1, byNumber[run.attempt] == nil { byNumber[run.attempt] = TaskAttempt(fromRun: run) }
        return byNumber.values.sorted { $0.number < $1.number }
    }
}

// MARK: Records

extension TaskAttempt {
    /// As the stores keep it (times as numbers; the tails in columns of their own).
    package var storedJSON: JSONValue {
        var object: JSONObject = ["attempt": .number(JSONNumber(number)), "status": .string(status.rawValue)]
        if let startedAt { object["started_at"] = .number(JSONNumber(startedAt)) }
        if let endedAt { object["ended_at"] = .number(JSONNumber(endedAt)) }
        fill(&object)
        return .object(object)
    }

    /// Reads ``storedJSON`` and the tails; nil when it is not one (an edited store).
    package init?(stored value: JSONValue, stderrTail: String?, stdoutTail: String?) {
        guard let number = value["attempt"]?.numberValue?.intValue,
              let status = value["status"]?.stringValue.flatMap(Status.init(rawValue:)) else { return nil }
        self.init(number: number, status: status, startedAt: value["started_at"]?.numberValue?.doubleValue,
                  executor: value["executor"]?.stringValue, agent: value["agent"]?.stringValue)
        endedAt = value["ended_at"]?.numberValue?.doubleValue
        exitCode = value["exit_code"]?.numberValue?.intValue.flatMap(Int32.init(exactly:))
        signal = value["signal"]?.stringValue
        error = value["error"]?.stringValue
        usage = ResourceUsage(json: value["usage"])
        self.stderrTail = stderrTail
        self.stdoutTail = stdoutTail
    }

    /// As the commands show it (times in RFC 3339).
    package var json: JSONValue {
        var object: JSONObject = ["attempt": .number(JSONNumber(number)), "status": .string(status.rawValue)]
        if let startedAt { object["started_at"] = .string(TaskRun.iso(startedAt)) }
        if let endedAt { object["ended_at"] = .string(TaskRun.iso(endedAt)) }
        if let startedAt, let endedAt { object["execution_time"] = .number(JSONNumber((max(endedAt - startedAt, 0) * 1e6).rounded() / 1e6)) }
        fill(&object)
        if let stderrTail { object["stderr_tail"] = .string(stderrTail) }
        if let stdoutTail { object["stdout_tail"] = .string(stdoutTail) }
        if fromRunRecord { object["from_run_record"] = true }
        return .object(object)
    }

    /// The members both forms share.
    private func fill(_ object: inout JSONObject) {
        if let exitCode { object["exit_code"] = .number(JSONNumber(Int(exitCode))) }
        if let signal { object["signal"] = .string(signal) }
        if let error { object["error"] = .string(error) }
        if let executor { object["executor"] = .string(executor) }
        if let agent { object["agent"] = .string(agent) }
        if let usage { object["usage"] = usage.json }
    }

    /// The schema of one attempt in an answer (see ``json``).
    package static let schema: JSONValue = [
        "type": "object", "required": ["attempt", "status"], "additionalProperties": true,
        "properties": [
            "attempt": ["type": "integer", "minimum": 1, "description": "The attempt's number, from 1."],
            "status": ["enum": .array(Status.allCases.map { .string($0.rawValue) }),
                       "description": "How it ended (running: not yet); interrupted: ended from outside the work, not counted against the retry policy."],
            "started_at": ["type": "string", "format": "date-time"], "ended_at": ["type": "string", "format": "date-time"],
            "execution_time": ["type": "number", "description": "Seconds from its start to its end."],
            "exit_code": ["type": "integer"], "signal": ["type": "string"], "error": ["type": "string"],
            "stderr_tail": ["type": "string", "description": .string("The end of its stderr (a command's; at most 64 KiB and 200 lines; kept for the newest \(keptTails) attempts).")],
            "stdout_tail": ["type": "string", "description": "The end of its stdout, bounded as stderr_tail."],
            "executor": ["type": "string", "description": "The declared executor it ran on (absent: the task's own)."],
            "agent": ["type": "string", "description": "The agent that ran it: a fleet agent's id, else the agent's name."],
            "usage": ResourceUsage.schema,
            "from_run_record": ["const": true, "description": "Made from the run's record: the store holds no record of this attempt (a run recorded before attempts were)."],
        ],
    ]
}

extension TaskAttempt: Encodable {
    public func encode(to encoder: any Encoder) throws { try json.encode(to: encoder) }
}
