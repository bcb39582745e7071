@testable import AgentWork
import JSONSchema

/// `"tasks"` of a settings file read by the work layer's own reader (``TaskSettings/read``): the
/// definitions and every problem the schema cannot see, by JSON pointer. (The whole settings
/// file, host schema included, is AgentRuntimeTests' `TaskSettingsTests`.)
struct TaskSettingsRead {
    let tasks: [TaskDefinition]
    /// Each problem's message by its pointer (two at one pointer joined by " | ").
    let messages: [String: String]

    init(_ tasks: String) throws {
        let (definitions, issues) = TaskSettings.read(try JSONValue.parse(tasks), environment: [:])
        self.tasks = definitions
        messages = Dictionary(issues.map { ($0.pointer, $0.message) }, uniquingKeysWith: { a, b in a + " | " + b })
    }
}
