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
    case replace

    /// Every action's name, as the `settings_change` schema lists them.
    package static let names = allCases.map(\.rawValue)
}
