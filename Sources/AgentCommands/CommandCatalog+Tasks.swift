import AgentWork
import JSONSchema

extension CommandCatalog {
    /// A run as the task commands show it (see ``TaskRun/json``; the commands are typed:
    /// ``TaskCommands``, ``AssignmentCommands``).
    public static var runSchema: JSONValue { TaskCommands.runSchema }

    /// The assignment's figures, as `status` and `diagnostics` show them too.
    public static var assignmentStatisticsSchema: JSONValue { AssignmentCommands.statisticsSchema }
}
