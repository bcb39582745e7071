import AgentCore
import Foundation
import JSONSchema

extension WorkflowSettings {
    /// The schema of a task's `retries` (the same for a task step's).
    package static let retriesValidator: JSONSchemaValidator? = TaskSettings.schema["additionalProperties"]?["properties"]?["retries"]
        .flatMap { try? JSONSchemaValidator(schema: $0) }

    package static func retriesProblems(_ value: JSONValue) -> [(pointer: String, message: String)]? {
        let problems = retriesValidator?.validate(value) ?? []
        return problems.isEmpty ? nil : problems.map { ($0.instanceLocation, $0.message) }
    }
}

extension StepReader {
    /// References must name what exists before the step runs: an earlier step (not one of a
    /// sibling branch), a variable an earlier `set` step sets, a field the input schema can
    /// have; `goto` targets a top-level step.
    package mutating func checkReferences(_ steps: [WorkflowStep], workflowPointer: String) {
        let topLevel = Set(steps.map(\.id))
        var visible = Set<String>(), variables = Set<String>()
        visit(steps, at: workflowPointer + "/steps", visible: &visible, variables: &variables, topLevel: topLevel)
    }

    private mutating func visit(_ steps: [WorkflowStep], at pointer: String, visible: inout Set<String>, variables: inout Set<String>, topLevel: Set<String>) {
        for (index, step) in steps.enumerated() {
            // Where the step is in the settings (steps that could not be read are left out of the list).
            let here = ids[step.id] ?? pointer + "/\(index)"
            for (at, value) in referencedValues(step, here) {
                let (references, bad) = WorkflowReferences.collect(value, at: at)
                problems += bad
                for (where_, reference) in references {
                    if let problem = problem(reference, visible: visible, variables: variables, self: step.id) { problems.append((where_, problem)) }
                }
            }
            switch step.kind {
            case .condition(_, let then, let otherwise):
                var (v1, s1) = (visible, variables), (v2, s2) = (visible, variables)
                visit(then, at: here + "/condition/then", visible: &v1, variables: &s1, topLevel: topLevel)
                visit(otherwise, at: here + "/condition/else", visible: &v2, variables: &s2, topLevel: topLevel)
                visible.formUnion(v1.union(v2))
                variables.formUnion(s1.union(s2))
            case .parallel(let branches, _):
                var allVisible = visible, allVariables = variables
                for (b, branch) in branches.enumerated() {
                    var (v, s) = (visible, variables)
                    visit(branch, at: here + "/parallel/branches/\(b)", visible: &v, variables: &s, topLevel: topLevel)
                    allVisible.formUnion(v)
                    allVariables.formUnion(s)
                }
                visible = allVisible
                variables = allVariables
            case .set(let values, _, _):
                variables.formUnion(values.keys)
            case .waitEvent(_, _, _, .goto(let target)), .waitSignal(_, _, .goto(let target)), .approval(_, _, _, .goto(let target)):
                if !topLevel.contains(target) {
                    let kind = step.kindName
                    problems.append((here + "/\(kind)/on_timeout/goto", "\"\(target)\" is not a top-level step of this workflow\(Suggestions.hint(for: target, in: Array(topLevel))); goto names a step of the workflow's own \"steps\" list (e.g. an escalation)"))
                }
            default:
                break
            }
            visible.insert(step.id)
        }
    }

    /// The values of a step that may hold references, with their pointers.
    private func referencedValues(_ step: WorkflowStep, _ here: String) -> [(String, JSONValue)] {
        switch step.kind {
        case .task(_, let input, _, _): [(here + "/input", input)]
        case .set(let variables, let memory, _): [(here + "/set/vars", .object(variables)), (here + "/set/memory", .object(memory))]
        case .publish(_, let payload): [(here + "/publish/payload", payload)]
        case .waitEvent(_, let condition?, _, _): [(here + "/wait_event/where", condition)]
        case .approval(_, let prompt, _, _): [(here + "/approval/prompt", .string(prompt))]
        case .chat(let text, _, let conversation): [(here + "/chat/text", .string(text))] + (conversation.map { [(here + "/chat/conversation", .string($0))] } ?? [])
        default: []
        }
    }

    private func problem(_ reference: WorkflowReferences.Reference, visible: Set<String>, variables: Set<String>, self id: String) -> String? {
        switch reference.source {
        case .steps:
            guard !visible.contains(reference.name) else { return nil }
            if reference.name == id { return "\(reference.text) refers to the step itself; a step reads the outputs of earlier steps" }
            return "\(reference.text) refers to \"\(reference.name)\", which is not a step that comes earlier\(Suggestions.hint(for: reference.name, in: Array(visible))) (earlier steps: \(visible.isEmpty ? "none" : visible.sorted().joined(separator: ", ")))"
        case .vars:
            let name = JSONPointer(reference.pointer)?.tokens.first ?? ""
            guard !variables.contains(name) else { return nil }
            return "\(reference.text) refers to the variable \"\(name)\", which no earlier set step sets\(Suggestions.hint(for: name, in: Array(variables))) (set earlier: \(variables.isEmpty ? "none" : variables.sorted().joined(separator: ", ")))"
        case .input:
            guard let schema = inputSchema, let tokens = JSONPointer(reference.pointer)?.tokens else { return nil }
            var node = schema
            for (depth, token) in tokens.enumerated() {
                if let properties = node["properties"]?.objectValue {
                    guard let inner = properties[token] else {
                        let declared = properties.keys.sorted()
                        let at = "/" + tokens.prefix(depth).joined(separator: "/")
                        return "\(reference.text) refers to \"\(token)\", which the workflow's \"input\" schema does not declare\(depth == 0 ? "" : " in \"\(at)\"")\(Suggestions.hint(for: token, in: declared)) (declared: \(declared.isEmpty ? "none" : declared.joined(separator: ", "))); declare it under \"properties\" or fix the reference"
                    }
                    node = inner
                } else if Int(token) != nil, let items = node["items"], items.objectValue != nil {
                    node = items
                } else {
                    return nil
                }
            }
            return nil
        case .memory:
            return nil
        }
    }
}
