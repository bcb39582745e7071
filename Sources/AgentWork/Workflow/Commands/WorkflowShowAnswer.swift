import JSONSchema

/// The answer of the commands about one workflow run: `{"ok": true, "run": …}`, with its step
/// log (`workflow_show`, `workflow_run` with `wait`).
package struct WorkflowShowAnswer: Encodable, Sendable {
    package let ok = true
    package var run: JSONValue
    package var steps: [JSONValue]?

    package init(_ run: WorkflowRun, steps: [WorkflowStepRecord]? = nil) {
        self.run = run.json
        self.steps = steps.map { $0.map(\.json) }
    }

    init(json run: JSONValue, steps: [JSONValue]? = nil) {
        self.run = run
        self.steps = steps
    }
}
