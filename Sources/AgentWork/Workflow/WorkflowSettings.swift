import AgentBase
import AgentCore
import Foundation
import JSONSchema

/// The settings' `"workflows"`: name → ``WorkflowDefinition``.
///
/// The host schema checks the outer shape; ``read(_:chatAdapters:)`` every step (its kind, its
/// keys, unique ids, references to earlier steps, to the input schema and to variables, `goto`
/// targets, logic adapters); ``check(_:tasks:definedTasks:)`` what needs the resolved tasks
/// (the task exists; a fully literal input passes its schema). Every problem at its pointer.
package enum WorkflowSettings {
    /// The schema of `"workflows"` (part of ``HostSchema``): the outer shape; the steps are
    /// read by ``read(_:chatAdapters:)``, which reports more precisely than a schema could.
    package static let schema: JSONValue = [
        "description": "Workflows: multi-step work run from a persisted step log (task, set, condition, parallel, publish, wait_event, wait_signal, approval, chat steps). Name → workflow.",
        "type": "object",
        "additionalProperties": [
            "type": "object",
            "required": ["steps"],
            "additionalProperties": false,
            "properties": [
                "description": ["type": "string", "description": "What the workflow does, for people."],
                "input": ["type": ["object", "boolean"], "description": "A JSON Schema for the run's input (checked when a run is asked for)."],
                "steps": ["type": "array", "minItems": 1, "items": ["type": "object"],
                          "description": "The steps, in order: each an object with an \"id\" and its kind's key (task, set, condition, parallel, publish, wait_event, wait_signal, approval, chat)."],
                "on_event": [
                    "description": "Start a run, with the event as input, for every event of `type` whose payload passes the JSON Schema `where`.",
                    "type": "object", "required": ["type"], "additionalProperties": false,
                    "properties": [
                        "type": ["type": "string", "minLength": 1, "description": "The event type that starts a run."],
                        "where": ["type": ["object", "boolean"], "description": "A JSON Schema over the event's payload (default: every event of the type)."],
                        "cycle": ["enum": ["intended"], "description": "Lets a trigger cycle through this on_event (tasks and workflows that start one another, refused otherwise): say so when a `where` ends it."],
                    ],
                ],
            ],
        ],
    ]

    package static let kinds = ["task", "set", "condition", "parallel", "publish", "wait_event", "wait_signal", "approval", "chat"]
    /// The keys each kind allows besides `id` and its own.
    package static let siblings: [String: Set<String>] = [
        "task": ["input", "timeout", "retries", "description"],
        "set": ["description"], "condition": ["description"], "parallel": ["description"], "publish": ["description"],
        "wait_event": ["description"], "wait_signal": ["description"], "approval": ["description"], "chat": ["description"],
    ]

    /// The workflows in `json` and the problems found, with their pointers. `chatAdapters`: the
    /// logic adapters of the chatbot process (nil: the agent has no chatbot).
    package static func read(_ json: JSONValue?, chatAdapters: [String]?, approvers: Set<String>? = nil, limits: WorkflowLimits = WorkflowLimits(),
                     unchecked: Bool = false)
        -> (workflows: [WorkflowDefinition], drafts: [WorkflowDefinition], issues: [(pointer: String, message: String)])
    {
        var workflows: [WorkflowDefinition] = []
        // Every workflow as far as it could be read: its task steps are checked against the
        // tasks too, so that one report has every problem.
        var drafts: [WorkflowDefinition] = []
        var issues: [(pointer: String, message: String)] = []
        for (name, value) in (json?.objectValue ?? [:]).sorted(by: { $0.key < $1.key }) {
            let pointer = "/workflows/" + JSONPointer.escape(name)
            var reader = StepReader(chatAdapters: chatAdapters, approvers: approvers)
            reader.unchecked = unchecked
            if let problem = PlainName.problem(name, what: "workflow name") { reader.problems.append((pointer, problem)) }
            guard let object = value.objectValue, let list = object["steps"]?.arrayValue else {
                issues += reader.problems
                continue
            }
            // Counted before anything is read: a definition beyond the limit is not read at all.
            if !unchecked, case let beyond = limits.problems(list, at: pointer + "/steps"), !beyond.isEmpty {
                issues += reader.problems + beyond
                continue
            }
            let inputSchema = object["input"]
            if let inputSchema, let problem = compileProblem(inputSchema) {
                reader.problems.append((pointer + "/input", "the input schema does not compile: \(problem); write a JSON Schema (draft 2020-12), e.g. {\"type\": \"object\", \"properties\": {…}}"))
            }
            reader.inputSchema = inputSchema
            let steps = reader.readList(list, at: pointer + "/steps")
            reader.checkReferences(steps, workflowPointer: pointer)
            var trigger: WorkflowDefinition.Trigger?
            if let event = object["on_event"]?.objectValue, let type = event["type"]?.stringValue {
                if let condition = event["where"], let problem = compileProblem(condition) {
                    reader.problems.append((pointer + "/on_event/where", "the condition does not compile: \(problem); write a JSON Schema over the event's payload"))
                }
                trigger = WorkflowDefinition.Trigger(type: type, condition: event["where"])
            }
            var workflow = WorkflowDefinition(name: name, steps: steps, source: value)
            workflow.description = object["description"]?.stringValue ?? ""
            workflow.inputSchema = inputSchema
            workflow.onEvent = trigger
            workflow.stepPointers = reader.ids
            drafts.append(workflow)
            guard reader.problems.isEmpty else {
                issues += reader.problems
                continue
            }
            workflows.append(workflow)
        }
        return (workflows, drafts, issues)
    }

    /// A run's copy of its definition, read again at a restart (nil if it cannot be: an edited store).
    package static func parse(name: String, source: JSONValue) -> WorkflowDefinition? {
        let (workflows, _, issues) = read(.object([name: source]), chatAdapters: nil, unchecked: true)
        return issues.isEmpty ? workflows.first : nil
    }

    /// What needs the resolved tasks: each task step's task exists (`definedTasks`: every name
    /// under `"tasks"`, valid or not) and its input, where fully literal, passes the task's schema.
    package static func check(_ workflows: [WorkflowDefinition], drafts: [WorkflowDefinition], tasks: [TaskDefinition], definedTasks: Set<String>)
        -> (valid: [WorkflowDefinition], issues: [(pointer: String, message: String, followsFrom: String?)])
    {
        let readable = Set(workflows.map(\.name))
        let byName = Dictionary(tasks.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        var valid: [WorkflowDefinition] = []
        var issues: [(pointer: String, message: String, followsFrom: String?)] = []
        for workflow in drafts {
            var problems: [(pointer: String, message: String, followsFrom: String?)] = []
            for (structural, step) in pointers(of: workflow) {
                let pointer = workflow.stepPointers[step.id] ?? structural
                guard case .task(let name, let input, _, _) = step.kind else { continue }
                guard let task = byName[name] else {
                    if definedTasks.contains(name) {
                        problems.append((pointer + "/task", "the task \"\(name)\" is invalid (see /tasks/\(JSONPointer.escape(name)))", "/tasks/" + JSONPointer.escape(name)))
                    } else {
                        let names = definedTasks.sorted()
                        problems.append((pointer + "/task", "unknown task \"\(name)\"\(Suggestions.hint(for: name, in: names)); tasks: \(names.isEmpty ? "none (define it under \"tasks\")" : names.joined(separator: ", "))", nil))
                    }
                    continue
                }
                // A literal input is the run's input as it is: bounded as every run's input.
                if WorkflowReferences.isLiteral(input), let problem = InputSize.problem(input) {
                    problems.append((pointer + "/input", problem.message, nil))
                    continue
                }
                if WorkflowReferences.isLiteral(input), let schema = task.inputSchema, let validator = try? JSONSchemaValidator(schema: schema) {
                    problems += validator.validate(input).map { (pointer + "/input" + $0.instanceLocation, "does not match the input schema of task \"\(name)\": \($0.message)", nil) }
                }
            }
            if problems.isEmpty, readable.contains(workflow.name) { valid.append(workflow) } else { issues += problems }
        }
        return (valid, issues)
    }

    /// Each step of `workflow` with its pointer in the settings.
    package static func pointers(of workflow: WorkflowDefinition) -> [(String, WorkflowStep)] {
        var result: [(String, WorkflowStep)] = []
        func walk(_ steps: [WorkflowStep], _ pointer: String) {
            for (index, step) in steps.enumerated() {
                let here = pointer + "/\(index)"
                result.append((here, step))
                switch step.kind {
                case .condition(_, let then, let otherwise):
                    walk(then, here + "/condition/then")
                    walk(otherwise, here + "/condition/else")
                case .parallel(let branches, _):
                    for (b, branch) in branches.enumerated() { walk(branch, here + "/parallel/branches/\(b)") }
                default: break
                }
            }
        }
        walk(workflow.steps, "/workflows/" + JSONPointer.escape(workflow.name) + "/steps")
        return result
    }

    package static func compileProblem(_ schema: JSONValue) -> String? {
        do {
            _ = try JSONSchemaValidator(schema: schema)
            return nil
        } catch {
            return "\(error)"
        }
    }
}
