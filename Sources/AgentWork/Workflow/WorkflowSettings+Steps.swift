import AgentBase
import AgentCore
import Foundation
import JSONSchema

/// Reads a workflow's steps, collecting every problem at its pointer.
package struct StepReader {
    package var chatAdapters: [String]?
    /// Users, token names and roles of the HTTP settings (nil: no HTTP front, any name).
    package var approvers: Set<String>?
    package var inputSchema: JSONValue?
    /// Reading a run's copy of its definition: what the agent has (chatbot, users) is not checked.
    package var unchecked = false
    package var problems: [(pointer: String, message: String)] = []
    /// Every id seen, with its pointer (duplicates are problems).
    package private(set) var ids: [String: String] = [:]

    package init(chatAdapters: [String]?, approvers: Set<String>? = nil) {
        self.chatAdapters = chatAdapters
        self.approvers = approvers
    }

    package mutating func readList(_ list: [JSONValue], at pointer: String) -> [WorkflowStep] {
        list.enumerated().compactMap { index, value in read(value, at: pointer + "/\(index)") }
    }

    package mutating func read(_ value: JSONValue, at pointer: String) -> WorkflowStep? {
        guard let object = value.objectValue else {
            problems.append((pointer, "expected a step (an object with an \"id\" and one of \(WorkflowSettings.kinds.joined(separator: ", "))), found \(Describe.value(value))"))
            return nil
        }
        var id = ""
        switch object["id"] {
        case .string(let text)?:
            if let problem = PlainName.problem(text, what: "step id") {
                problems.append((pointer + "/id", problem))
            } else if let first = ids[text] {
                problems.append((pointer + "/id", "the step id \"\(text)\" is used twice (first at \(first)); every step of a workflow needs its own id"))
            } else {
                ids[text] = pointer
            }
            id = text
        case nil:
            problems.append((pointer, "a step needs an \"id\" (a name unique in the workflow, e.g. \"classify\")"))
        case let other?:
            problems.append((pointer + "/id", "expected a string, found \(Describe.value(other))"))
        }
        let kinds = WorkflowSettings.kinds.filter { object[$0] != nil }
        guard kinds.count == 1, let kind = kinds.first else {
            if kinds.isEmpty {
                let unknown = object.keys.filter { $0 != "id" && $0 != "description" && !WorkflowSettings.siblings["task"]!.contains($0) }
                let hint = unknown.first.map { "; unknown step kind \"\($0)\"\(Suggestions.hint(for: $0, in: WorkflowSettings.kinds))" } ?? ""
                problems.append((pointer, "a step needs one of \(WorkflowSettings.kinds.map { "\"\($0)\"" }.joined(separator: ", "))\(hint)"))
            } else {
                problems.append((pointer, "a step has one kind; found \(kinds.map { "\"\($0)\"" }.joined(separator: " and "))"))
            }
            return nil
        }
        let allowed = (WorkflowSettings.siblings[kind] ?? []).union(["id", kind])
        for key in object.keys where !allowed.contains(key) {
            problems.append((pointer + "/" + JSONPointer.escape(key), "unknown property \"\(key)\" in a \(kind) step\(Suggestions.hint(for: key, in: Array(allowed))); allowed: \(allowed.sorted().joined(separator: ", "))"))
        }
        let here = pointer + "/" + kind
        let body = object[kind]!
        let before = problems.count
        let parsed: WorkflowStep.Kind?
        switch kind {
        case "task": parsed = task(object, body, here, pointer)
        case "set": parsed = set(body, here)
        case "condition": parsed = condition(body, here)
        case "parallel": parsed = parallel(body, here)
        case "publish": parsed = publish(body, here)
        case "wait_event": parsed = waitEvent(body, here)
        case "wait_signal": parsed = waitSignal(body, here)
        case "approval": parsed = approval(body, here)
        default: parsed = chat(body, here)
        }
        guard let parsed, problems.count == before, !id.isEmpty else { return nil }
        return WorkflowStep(id: id, kind: parsed)
    }

    // MARK: Kinds

    private mutating func task(_ object: JSONObject, _ body: JSONValue, _ here: String, _ pointer: String) -> WorkflowStep.Kind? {
        guard let name = body.stringValue, !name.isEmpty else {
            problems.append((here, "expected the task's name (a string under \"tasks\"), found \(Describe.value(body))"))
            return nil
        }
        let timeout = seconds(object["timeout"], at: pointer + "/timeout")
        var retries: TaskDefinition.RetryPolicy?
        if let value = object["retries"] {
            if let problems = WorkflowSettings.retriesProblems(value) {
                self.problems += problems.map { (pointer + "/retries" + $0.pointer, $0.message) }
            } else {
                retries = TaskSettings.retries(value)
            }
        }
        return .task(name: name, input: object["input"] ?? .object([:]), retries: retries, timeout: timeout)
    }

    private mutating func set(_ body: JSONValue, _ here: String) -> WorkflowStep.Kind? {
        guard let object = expectObject(body, here, keys: ["vars", "memory", "scope"], example: #"{"vars": {"amount": "${steps:check/amount}"}}"#) else { return nil }
        var variables = JSONObject(), memory = JSONObject()
        for (key, target) in [("vars", true), ("memory", false)] {
            guard let value = object[key] else { continue }
            guard let entries = value.objectValue else {
                problems.append((here + "/" + key, "expected an object (name → value), found \(Describe.value(value))"))
                continue
            }
            if target { variables = entries } else { memory = entries }
        }
        if object["vars"] == nil, object["memory"] == nil {
            problems.append((here, "a set step needs \"vars\" (run variables) or \"memory\" (shared memory keys), e.g. {\"vars\": {\"amount\": 12}}"))
        }
        var scope = "agent"
        if let value = object["scope"] {
            if let text = value.stringValue, text == "agent" || text == "run" {
                scope = text
            } else {
                problems.append((here + "/scope", "expected \"agent\" (memory shared by the whole agent) or \"run\" (this run's own), found \(Describe.value(value))"))
            }
        }
        return .set(variables: variables, memory: memory, scope: scope)
    }

    private mutating func condition(_ body: JSONValue, _ here: String) -> WorkflowStep.Kind? {
        guard let object = expectObject(body, here, keys: ["when", "then", "else"], example: #"{"when": {"properties": {"amount": {"minimum": 100}}}, "then": [...], "else": [...]}"#) else { return nil }
        guard let when = object["when"] else {
            problems.append((here, "a condition needs \"when\": a JSON Schema over the run's variables, e.g. {\"properties\": {\"amount\": {\"minimum\": 100}}}"))
            return nil
        }
        if let problem = WorkflowSettings.compileProblem(when) {
            problems.append((here + "/when", "the condition does not compile: \(problem); write a JSON Schema over the run's variables"))
        }
        let then = stepList(object["then"], at: here + "/then", required: true)
        let otherwise = stepList(object["else"], at: here + "/else", required: false)
        return .condition(when: when, then: then, else: otherwise)
    }

    private mutating func parallel(_ body: JSONValue, _ here: String) -> WorkflowStep.Kind? {
        guard let object = expectObject(body, here, keys: ["branches", "join"], example: #"{"branches": [[...], [...]], "join": "all"}"#) else { return nil }
        guard let list = object["branches"]?.arrayValue, !list.isEmpty else {
            problems.append((here + (object["branches"] == nil ? "" : "/branches"), "a parallel step needs \"branches\": an array of step lists, e.g. [[{\"id\": \"a\", …}], [{\"id\": \"b\", …}]]"))
            return nil
        }
        var join = WorkflowStep.Join.all
        if let value = object["join"] {
            if let parsed = value.stringValue.flatMap(WorkflowStep.Join.init(rawValue:)) {
                join = parsed
            } else {
                problems.append((here + "/join", "expected \"all\" (wait for every branch) or \"first\" (the first to succeed; the others are cancelled), found \(Describe.value(value))"))
            }
        }
        let branches = list.enumerated().map { index, branch in stepList(branch, at: here + "/branches/\(index)", required: true) }
        return .parallel(branches: branches, join: join)
    }

    private mutating func publish(_ body: JSONValue, _ here: String) -> WorkflowStep.Kind? {
        guard let object = expectObject(body, here, keys: ["type", "payload"], example: #"{"type": "refund.approved", "payload": {"order": "${input:/order}"}}"#) else { return nil }
        guard let type = eventType(object["type"], at: here) else { return nil }
        return .publish(type: type, payload: object["payload"] ?? .object([:]))
    }

    private mutating func waitEvent(_ body: JSONValue, _ here: String) -> WorkflowStep.Kind? {
        guard let object = expectObject(body, here, keys: ["type", "where", "timeout", "on_timeout"], example: #"{"type": "payment.received", "where": {...}, "timeout": 3600, "on_timeout": "fail"}"#) else { return nil }
        guard let type = eventType(object["type"], at: here) else { return nil }
        if let condition = object["where"], let problem = WorkflowSettings.compileProblem(WorkflowReferences.placeholders(in: condition)) {
            problems.append((here + "/where", "the condition does not compile: \(problem); write a JSON Schema over the event's payload (references such as \"${input:/order}\" are resolved when the step starts)"))
        }
        return .waitEvent(type: type, where: object["where"], timeout: seconds(object["timeout"], at: here + "/timeout"), onTimeout: onTimeout(object["on_timeout"], at: here))
    }

    private mutating func waitSignal(_ body: JSONValue, _ here: String) -> WorkflowStep.Kind? {
        guard let object = expectObject(body, here, keys: ["name", "timeout", "on_timeout"], example: #"{"name": "customer.replied", "timeout": 86400, "on_timeout": "fail"}"#) else { return nil }
        guard let name = object["name"]?.stringValue else {
            problems.append((here + (object["name"] == nil ? "" : "/name"), "expected \"name\": the signal's name, as `agent-control workflow signal RUN NAME` sends it (e.g. \"customer.replied\")"))
            return nil
        }
        if let problem = PlainName.problem(name, what: "signal name") {
            problems.append((here + "/name", problem))
            return nil
        }
        return .waitSignal(name: name, timeout: seconds(object["timeout"], at: here + "/timeout"), onTimeout: onTimeout(object["on_timeout"], at: here))
    }

    private mutating func approval(_ body: JSONValue, _ here: String) -> WorkflowStep.Kind? {
        guard let object = expectObject(body, here, keys: ["approvers", "prompt", "timeout", "on_timeout"], example: #"{"approvers": ["alice", "admin"], "prompt": "Refund ${vars:/amount}?", "timeout": 86400}"#) else { return nil }
        let names = object["approvers"]?.arrayValue?.compactMap(\.stringValue) ?? []
        if names.isEmpty || names.count != object["approvers"]?.arrayValue?.count {
            problems.append((here + (object["approvers"] == nil ? "" : "/approvers"), "an approval needs \"approvers\": user names or roles of the HTTP settings (e.g. [\"alice\", \"admin\"])"))
        } else if let known = approvers, !unchecked {
            for (index, name) in names.enumerated() where !known.contains(name) {
                problems.append((here + "/approvers/\(index)", "unknown approver \"\(name)\"\(Suggestions.hint(for: name, in: Array(known))); expected a user or token name under \"http\", or a role (read, admin)"))
            }
        }
        let prompt = object["prompt"]?.stringValue ?? ""
        if let value = object["prompt"], value.stringValue == nil { problems.append((here + "/prompt", "expected a string, found \(Describe.value(value))")) }
        return .approval(approvers: names, prompt: prompt, timeout: seconds(object["timeout"], at: here + "/timeout"), onTimeout: onTimeout(object["on_timeout"], at: here))
    }

    private mutating func chat(_ body: JSONValue, _ here: String) -> WorkflowStep.Kind? {
        guard let object = expectObject(body, here, keys: ["text", "adapter", "conversation"], example: #"{"text": "Classify: ${input:/complaint}", "adapter": "features"}"#) else { return nil }
        guard let text = object["text"]?.stringValue, !text.isEmpty else {
            problems.append((here + (object["text"] == nil ? "" : "/text"), "a chat step needs \"text\": the message to send (references allowed)"))
            return nil
        }
        guard let adapters = unchecked ? [] : chatAdapters else {
            problems.append((here, "a chat step needs a chatbot process (\"type\": \"chatbot\" under \"processes\"); this agent has none"))
            return nil
        }
        let adapter = object["adapter"]?.stringValue
        if let adapter, !unchecked, !adapters.contains(adapter) {
            problems.append((here + "/adapter", "unknown logic adapter \"\(adapter)\"\(Suggestions.hint(for: adapter, in: adapters)); the chatbot's adapters: \(adapters.isEmpty ? "none" : adapters.joined(separator: ", "))"))
        } else if let value = object["adapter"], adapter == nil {
            problems.append((here + "/adapter", "expected a string, found \(Describe.value(value))"))
        }
        return .chat(text: text, adapter: adapter, conversation: object["conversation"]?.stringValue)
    }

    // MARK: Parts

    private mutating func expectObject(_ body: JSONValue, _ here: String, keys: Set<String>, example: String) -> JSONObject? {
        guard let object = body.objectValue else {
            problems.append((here, "expected an object, e.g. \(example); found \(Describe.value(body))"))
            return nil
        }
        for key in object.keys where !keys.contains(key) {
            problems.append((here + "/" + JSONPointer.escape(key), "unknown property \"\(key)\"\(Suggestions.hint(for: key, in: Array(keys))); allowed: \(keys.sorted().joined(separator: ", "))"))
        }
        return object
    }

    private mutating func stepList(_ value: JSONValue?, at pointer: String, required: Bool) -> [WorkflowStep] {
        guard let value else {
            if required { problems.append((pointer, "expected a list of steps")) }
            return []
        }
        guard let list = value.arrayValue, !list.isEmpty || !required else {
            problems.append((pointer, "expected a non-empty list of steps, found \(Describe.value(value))"))
            return []
        }
        return readList(list, at: pointer)
    }

    private mutating func eventType(_ value: JSONValue?, at here: String) -> String? {
        guard let type = value?.stringValue, !type.isEmpty else {
            problems.append((here + (value == nil ? "" : "/type"), "expected \"type\": the event type (e.g. \"order.refunded\")"))
            return nil
        }
        return type
    }

    private mutating func seconds(_ value: JSONValue?, at pointer: String) -> Double? {
        guard let value else { return nil }
        // At least the shortest period: a wait that times out and goes to itself repeats at it
        // (1e-300 made 22,000 steps in 10 s, for ever).
        guard let number = value.numberValue?.doubleValue, number.isFinite, number >= SettingsBounds.shortestPeriod, number <= SettingsBounds.longestTimeout else {
            problems.append((pointer, "expected seconds (a number from \(SettingsBounds.shortestPeriod.compactText) to \(Int(SettingsBounds.longestTimeout))), found \(Describe.value(value))"))
            return nil
        }
        return number
    }

    private mutating func onTimeout(_ value: JSONValue?, at here: String) -> WorkflowStep.OnTimeout {
        switch value {
        case nil, .string("fail")?: return .fail
        case .string("continue")?: return .continue
        case let other?:
            if let target = other["goto"]?.stringValue, other.objectValue?.count == 1 { return .goto(target) }
            problems.append((here + "/on_timeout", "expected \"fail\", \"continue\" or {\"goto\": STEP_ID} (a top-level step, e.g. an escalation), found \(Describe.value(other))"))
            return .fail
        }
    }
}
