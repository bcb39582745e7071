import JSONSchema

/// A task's `on_event` trigger, compiled for routing.
struct TaskTrigger {
    var task: String
    /// The payload's schema (nil: every event of the type).
    var condition: JSONSchemaValidator?
    /// Not a task: the workflow engine wants events of this type (a wait or an `on_event`).
    var workflows = false
}
