import Foundation
import JSONSchema

/// One entry of the settings' `"workflows"`: steps run one after another from a persisted step
/// log (never replayed code), with an input checked against `input`.
///
/// ```json
/// "workflows": {"refund": {"input": {"type": "object", "required": ["order"]},
///                          "steps": [{"id": "check", "task": "check_order", "input": {"order": "${input:/order}"}},
///                                    {"id": "tell", "publish": {"type": "refund.checked", "payload": "${steps:check}"}}]}}
/// ```
public struct WorkflowDefinition: Equatable, Sendable {
    /// What starts a run by itself besides the commands: an event of `type` whose payload passes `condition`.
    public struct Trigger: Equatable, Sendable {
        public var type: String
        public var condition: JSONValue?
    }

    /// The key in `"workflows"`.
    public var name: String
    public var description: String = ""
    /// The input's JSON Schema (nil: any object).
    public var inputSchema: JSONValue?
    public var steps: [WorkflowStep]
    public var onEvent: Trigger?
    /// The definition as written: a run keeps a copy, so that a reload changes only new runs.
    public var source: JSONValue
    /// A hash of ``source``: the version a run started with.
    public var version: String
    /// Each step's pointer in the settings, by id (for messages).
    package var stepPointers: [String: String] = [:]

    public init(name: String, steps: [WorkflowStep], source: JSONValue) {
        self.name = name
        self.steps = steps
        self.source = source
        version = Self.version(of: source)
    }

    /// FNV-1a 64 of the sorted-keys JSON text: stable across runs of the agent and across machines.
    package static func version(of source: JSONValue) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in source.serialized(sortedKeys: true).utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x100_0000_01b3
        }
        let text = String(hash, radix: 16)
        return String(repeating: "0", count: 16 - text.count) + text
    }

    /// Every step, nested ones included, in document order.
    package var allSteps: [WorkflowStep] {
        var result: [WorkflowStep] = []
        func walk(_ steps: [WorkflowStep]) {
            for step in steps {
                result.append(step)
                for list in step.children { walk(list) }
            }
        }
        walk(steps)
        return result
    }
}

/// One step: an `id` and its kind's key.
public struct WorkflowStep: Equatable, Sendable {
    /// What a `wait_event`, a `wait_signal` or an `approval` does when its time is up.
    public enum OnTimeout: Equatable, Sendable {
        case fail
        /// The step succeeds with a null output.
        case `continue`
        /// The run goes on at this top-level step (an escalation).
        case goto(String)
    }

    /// How a `parallel` step ends.
    public enum Join: String, Equatable, Sendable {
        /// When every branch has ended (one failing fails the step).
        case all
        /// When the first branch succeeds; the others are cancelled.
        case first
    }

    public enum Kind: Equatable, Sendable {
        /// Runs a task through the coordinator with an input built from references.
        case task(name: String, input: JSONValue, retries: TaskDefinition.RetryPolicy?, timeout: Double?)
        /// Sets run variables and shared memory keys.
        case set(variables: JSONObject, memory: JSONObject, scope: String)
        /// Runs `then` when the run's variables pass `when` (a JSON Schema), else `else`.
        case condition(when: JSONValue, then: [WorkflowStep], else: [WorkflowStep])
        case parallel(branches: [[WorkflowStep]], join: Join)
        /// Emits an event on the bus.
        case publish(type: String, payload: JSONValue)
        /// Waits for an event of `type` whose payload passes `where` (its references resolved
        /// when the step starts).
        case waitEvent(type: String, where: JSONValue?, timeout: Double?, onTimeout: OnTimeout)
        /// Waits for a signal `name` sent to this run (`workflow signal`); one sent before the
        /// step started is kept for it.
        case waitSignal(name: String, timeout: Double?, onTimeout: OnTimeout)
        /// Waits for one of `approvers` (user names or HTTP roles) to approve or reject.
        case approval(approvers: [String], prompt: String, timeout: Double?, onTimeout: OnTimeout)
        /// Asks the chatbot (or one named logic adapter of it); the answer is the output.
        case chat(text: String, adapter: String?, conversation: String?)
    }

    public var id: String
    public var kind: Kind

    /// The kind's key, as written.
    public var kindName: String {
        switch kind {
        case .task: "task"
        case .set: "set"
        case .condition: "condition"
        case .parallel: "parallel"
        case .publish: "publish"
        case .waitEvent: "wait_event"
        case .waitSignal: "wait_signal"
        case .approval: "approval"
        case .chat: "chat"
        }
    }

    /// The step lists nested in this step.
    package var children: [[WorkflowStep]] {
        switch kind {
        case .condition(_, let then, let otherwise): [then, otherwise]
        case .parallel(let branches, _): branches
        default: []
        }
    }
}
