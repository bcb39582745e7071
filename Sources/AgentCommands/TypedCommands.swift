import AgentBase
import AgentWork

/// The typed commands (``AgentCommand``), as each layer contributes them: the features'
/// (AgentWork: their hosts are theirs) and the ones declared here whose hosts the root
/// (AgentRuntime) composes and reaches through a protocol (``SupervisionCommandHost``,
/// ``SettingsCommandHost``, ``ChatCommandHost``, ``StoreReadHost``). The registry boxes each.
enum TypedCommands {
    /// The features' commands (AgentWork).
    static var work: [any AgentCommand.Type] {
        TaskCommands.all + AssignmentCommands.all + ScheduleCommands.all + WorkflowCommands.all + MemoryCommands.all
            + [FleetStatusCommand.self, EventPublishCommand.self]
    }
    /// The commands whose host is the root's.
    static var agent: [any AgentCommand.Type] {
        SupervisionCommands.all + ChatCommands.all + ConfigurationCommands.all + ResourceCommands.all + StoreCommands.all.map { $0 as any AgentCommand.Type }
    }

    static var all: [any AgentCommand.Type] { agent + work }
}
