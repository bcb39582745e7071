import AgentWork
import JSONSchema

extension CommandCatalog {
    /// The task commands are typed (``TaskCommands``); the assignment commands share their
    /// schemas of a run.
    package static var runID: JSONValue { TaskCommands.runID }

    /// A run as the task commands show it (see ``TaskRun/json``).
    public static var runSchema: JSONValue { TaskCommands.runSchema }

    package static var runAnswer: JSONValue { TaskCommands.runAnswer }
}
