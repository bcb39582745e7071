/// What one change of `settings_change` does (``SettingsChange`` in the root applies it); here,
/// beside the command's schema, which lists the actions.
package enum SettingsChangeAction: String, Codable, Sendable, CaseIterable {
    case enableModule = "enable_module"
    case disableModule = "disable_module"
    case addProcess = "add_process"
    case removeProcess = "remove_process"
    case enableProcess = "enable_process"
    case disableProcess = "disable_process"
    case setProcess = "set_process"
    case addWorkflow = "add_workflow"
    case setWorkflow = "set_workflow"
    case removeWorkflow = "remove_workflow"
    case addWorkflowStep = "add_workflow_step"
    case addTask = "add_task"
    case setTask = "set_task"
    case removeTask = "remove_task"
    case addSchedule = "add_schedule"
    case setSchedule = "set_schedule"
    case removeSchedule = "remove_schedule"
    case addExecutor = "add_executor"
    case setExecutor = "set_executor"
    case removeExecutor = "remove_executor"
    case replace

    /// Every action's name, as the `settings_change` schema lists them.
    package static let names = allCases.map(\.rawValue)

    /// The action that does `verb` to one `resource` (`add_task`).
    package init(_ verb: SettingsResource.Verb, _ resource: SettingsResource) {
        // Every verb and resource has its action: the names are made the same way.
        self = SettingsChangeAction(rawValue: verb.rawValue + "_" + resource.rawValue)!
    }

    /// What the action does to one resource of the settings, when it is such an action
    /// (`add_task`: add a task); nil for the others (modules, processes, steps, replace).
    package var resourceChange: (verb: SettingsResource.Verb, resource: SettingsResource)? {
        let parts = rawValue.split(separator: "_", maxSplits: 1).map(String.init)
        guard parts.count == 2, let verb = SettingsResource.Verb(rawValue: parts[0]), let resource = SettingsResource(rawValue: parts[1]) else { return nil }
        return (verb, resource)
    }
}
