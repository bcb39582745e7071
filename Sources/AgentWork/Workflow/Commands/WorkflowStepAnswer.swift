import JSONSchema

/// `{"ok": true, "step": …}`: the approval step's record once the decision is committed.
package struct WorkflowStepAnswer: Encodable, Sendable {
    package let ok = true
    package var step: JSONValue
}
