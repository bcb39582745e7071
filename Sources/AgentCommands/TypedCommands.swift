import AgentBase
import AgentWork

/// The typed commands (``AgentCommand``), by feature; the registry boxes each.
enum TypedCommands {
    static var all: [any AgentCommand.Type] { TaskCommands.all + AssignmentCommands.all + ScheduleCommands.all + WorkflowCommands.all }
}
