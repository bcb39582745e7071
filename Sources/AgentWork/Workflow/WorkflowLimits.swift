import JSONSchema

/// How big a workflow may be (`"workflow_limits"` in the settings), checked when the settings
/// are validated: a definition of 10,000 parallel branches validated, and its runs' fan-out
/// held the loop for seconds. A definition beyond a limit is a settings error at its pointer
/// that names the limit and how to raise it.
public struct WorkflowLimits: Sendable, Equatable {
    /// Steps in one workflow, counting those inside conditions and parallel branches.
    public var steps = WorkflowLimits.defaultSteps
    /// Branches of one parallel step: the runs' fan-out.
    public var branches = WorkflowLimits.defaultBranches

    public static let defaultSteps = 1_000
    public static let defaultBranches = 100
    /// The most either setting may say.
    public static let mostSteps = 100_000
    public static let mostBranches = 10_000

    public init() {}

    /// The settings' `"workflow_limits"` (already checked by the schema; the defaults for
    /// what is missing or was refused).
    public init(_ json: JSONValue?) {
        if let value = json?["steps"]?.numberValue?.intValue, (1...Self.mostSteps).contains(value) { steps = value }
        if let value = json?["branches"]?.numberValue?.intValue, (1...Self.mostBranches).contains(value) { branches = value }
    }

    /// The schema of `"workflow_limits"` (part of ``HostSchema``).
    package static let schema: JSONValue = [
        "description": "How big a workflow may be; a definition beyond a limit is a settings error.",
        "type": "object", "additionalProperties": false,
        "properties": [
            "steps": ["type": "integer", "minimum": 1, "maximum": .number(JSONNumber(mostSteps)), "default": .number(JSONNumber(defaultSteps)),
                      "description": "Steps in one workflow, counting those inside conditions and parallel branches."],
            "branches": ["type": "integer", "minimum": 1, "maximum": .number(JSONNumber(mostBranches)), "default": .number(JSONNumber(defaultBranches)),
                         "description": "Branches of one parallel step."],
        ],
    ]

    /// The problems of a workflow whose `steps` (as written) go beyond a limit: each parallel
    /// step with too many branches (at its `branches`), and too many steps in all (at
    /// `steps`). Found without reading the steps, and without walking more than the limits
    /// allow, so that a huge definition costs little to refuse.
    package func problems(_ list: [JSONValue], at pointer: String) -> [(pointer: String, message: String)] {
        var walk = Walk(limits: self)
        walk.visit(list, at: pointer)
        if walk.count > steps {
            walk.problems.append((pointer, "the workflow has more than \(steps) steps (counting those inside conditions and parallel branches); "
                + "at most \(steps) are allowed: split it into workflows that start one another (a publish step and on_event), "
                + "or raise /workflow_limits/steps (at most \(Self.mostSteps))"))
        }
        return walk.problems
    }

    private struct Walk {
        let limits: WorkflowLimits
        var count = 0
        var problems: [(pointer: String, message: String)] = []

        mutating func visit(_ list: [JSONValue], at pointer: String) {
            for (index, step) in list.enumerated() {
                guard count <= limits.steps else { return }
                count += 1
                let here = pointer + "/\(index)"
                if let condition = step["condition"] {
                    for key in ["then", "else"] { visit(condition[key]?.arrayValue ?? [], at: here + "/condition/" + key) }
                }
                guard let branches = step["parallel"]?["branches"]?.arrayValue else { continue }
                guard branches.count <= limits.branches else {
                    problems.append((here + "/parallel/branches", "the parallel step has \(branches.count) branches; at most \(limits.branches) are allowed: "
                        + "run the work as task runs from fewer branches, or raise /workflow_limits/branches (at most \(WorkflowLimits.mostBranches))"))
                    continue
                }
                for (number, branch) in branches.enumerated() {
                    visit(branch.arrayValue ?? [], at: here + "/parallel/branches/\(number)")
                }
            }
        }
    }
}
