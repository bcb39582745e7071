import JSONSchema

/// A task's `on_event` trigger, compiled for routing.
package struct TaskTrigger {
    package var task: String
    /// The payload's schema (nil: every event of the type).
    package var condition: JSONSchemaValidator?
    /// Not a task: the workflow engine wants events of this type (a wait or an `on_event`).
    package var workflows = false

    package init(task: String, condition: JSONSchemaValidator? = nil, workflows: Bool = false) {
        self.task = task
        self.condition = condition
        self.workflows = workflows
    }
}
