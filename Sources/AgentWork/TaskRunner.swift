import AgentSupervision
import JSONSchema

/// How one kind of task carries out a run: the built-in `command` type spawns a program, a
/// module task type hands the run to an executor worker of its module.
///
/// The work layer's ``TaskCoordinator`` decides *which* run goes *when* (queue order,
/// concurrency, retries, timeouts); a runner only carries runs out. Every call is made on the
/// supervisor's loop thread, and a runner reports on the loop thread too (work of its own
/// threads is posted back with the loop's inbox), so that neither needs a lock.
package protocol TaskRunner: AnyObject {
    /// Starts `run`. `report` is called on the loop thread with progress and heartbeats while
    /// the run goes on and exactly once with `.finished`, after which nothing more is reported
    /// for the run. A run that cannot start (a program that does not exist, a module that
    /// cannot load) is finished as `.failed` with the reason — reported, never thrown.
    func start(_ run: TaskRunStart, report: @escaping (TaskRunReport) -> Void)

    /// Ends a started run early: its whole process tree is killed (a command) or the handler
    /// is cancelled and, if it does not return within its grace, its worker killed (a module
    /// task). The run is then reported `.finished` with `reason` as its status (`.cancelled`,
    /// `.timedOut`, or `.interrupted` when the agent stops — given the same grace as a cancel).
    /// A run already finished is left alone.
    func cancel(runID: String, reason: TaskRunOutcome.Status)

    /// The agent stops, and its runs' grace is over: every run still going is ended as
    /// `.interrupted` at once, its processes killed. Called once; nothing is started afterwards.
    func shutDown()
    /// Sends off what the runs started since the last call need now, rather than at the end
    /// of the loop's turn (a batch of runs: before their records are written). Optional.
    func flush()
    /// Whether a run may be handed over before its not-before (``TaskRunStart/notBefore``),
    /// the runner holding it until then (the module executors do, in the worker).
    var startsAhead: Bool { get }
    /// Whether the runner reads the input as a value (a command's `INPUT_*`), not only its
    /// text: a large input then reaches it as both, when the run had both (``RunInput``).
    var readsInputValue: Bool { get }
}

extension TaskRunner {
    package func flush() {}
    package var startsAhead: Bool { false }
    package var readsInputValue: Bool { false }
}

/// One attempt of a run, as a runner receives it.
package struct TaskRunStart {
    /// The run's id: stable across attempts (`AGENT_TASK_RUN_ID`).
    package var runID: String
    /// The key a handler or a command makes its effect idempotent with
    /// (`AGENT_TASK_IDEMPOTENCY_KEY`, `TaskContext.idempotencyKey`); see ``TaskRun/idempotencyKey``.
    package var idempotencyKey: String
    /// 1 for the first attempt (`AGENT_TASK_ATTEMPT`).
    package var attempt: Int
    package var task: TaskDefinition
    /// The run's input, valid against the task's input schema. Read again from its text when
    /// the run held it as text alone (``RunInput``): ask once.
    package var input: JSONValue { held.value }
    /// The input as the run held it.
    package var held: RunInput
    /// ``input`` as compact JSON text, when it was made off the loop (``TaskRun/inputText``).
    package var inputText: [UInt8]? {
        get { held.text }
        set {
            if let newValue { held.setText(newValue) } else { held.dropText() }
        }
    }
    /// The declared executor it runs on (nil: the task's implicit executor).
    package var executor: String?
    /// Seconds since the epoch before which the run must not start (a schedule's fire sent
    /// ahead of its instant; only to a runner that ``TaskRunner/startsAhead``). Nil: at once.
    package var notBefore: Double?

    package init(runID: String, idempotencyKey: String? = nil, attempt: Int, task: TaskDefinition, input: JSONValue, executor: String? = nil,
         notBefore: Double? = nil) {
        self.notBefore = notBefore
        self.runID = runID
        self.idempotencyKey = idempotencyKey ?? runID
        self.attempt = attempt
        self.task = task
        held = RunInput(input)
        self.executor = executor
    }

    /// ``input`` as compact JSON text: as made off the loop, else made now.
    package var inputBytes: [UInt8] { inputText ?? input.serializedBytes() }
}

/// What a runner says about a run it carries out.
package enum TaskRunReport {
    /// How far the run got (0...1 when known) and what it is doing.
    case progress(fraction: Double?, message: String?)
    /// The run is alive (module handlers; the coordinator's watchdog counts from the last).
    case heartbeat
    /// The run ended; reported exactly once.
    case finished(TaskRunOutcome)
}

/// How an attempt ended.
package struct TaskRunOutcome: Equatable {
    package enum Status: String, Equatable {
        case succeeded
        case failed
        case timedOut = "timed_out"
        case cancelled
        /// The agent stopped (or died) while it ran.
        case interrupted
    }

    package var status: Status
    /// The handler's output, or a command's stdout (JSON when it parses, else a string).
    package var output: JSONValue?
    /// Why it failed, in words a user can act on.
    package var error: String?
    /// A command's exit status, or the signal that ended it.
    package var exitCode: Int32?
    package var signal: String?
    /// The last lines of a command's stderr (bounded).
    package var stderrTail: String?
    /// The last lines of a command's stdout, bounded as ``stderrTail`` (the attempt's record).
    package var stdoutTail: String?
    /// The executor's worker died during the run (not ended by a cancel, timeout or watchdog):
    /// on a declared executor the run is retried on another one (at least once).
    package var executorLost = false
    /// What the attempt's processes used (a command run in a cgroup of its own).
    package var usage: ResourceUsage?
    /// ``output`` nests at most ``InputNesting/deepest`` levels already (a command's, checked
    /// where it was parsed, off the loop): the run keeps it without walking it again. Not a
    /// part of the outcome: two outcomes equal but for it are equal.
    package var outputNestingChecked = false

    package init(status: Status, output: JSONValue? = nil, error: String? = nil, exitCode: Int32? = nil,
         signal: String? = nil, stderrTail: String? = nil) {
        self.status = status
        self.output = output
        self.error = error
        self.exitCode = exitCode
        self.signal = signal
        self.stderrTail = stderrTail
    }

    package static func == (a: TaskRunOutcome, b: TaskRunOutcome) -> Bool {
        (a.status, a.output, a.error, a.exitCode, a.signal) == (b.status, b.output, b.error, b.exitCode, b.signal)
            && (a.stderrTail, a.stdoutTail, a.executorLost) == (b.stderrTail, b.stdoutTail, b.executorLost) && a.usage == b.usage
    }
}
