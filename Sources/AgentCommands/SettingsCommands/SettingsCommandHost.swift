import AgentBase
import JSONSchema

/// What the configuration commands run on: the settings file the agent was started from, as
/// the root (AgentRuntime) reaches it. The commands are declared here, below the root, so that
/// every front finds them in the one registry.
package protocol SettingsCommandHost: AnyObject {
    func settingsGet(respond: @escaping (Result<SettingsGetCommand.Answer, CommandError>) -> Void)
    func settingsChange(_ request: SettingsChangeCommand.Request, respond: @escaping (Result<SettingsChangeCommand.Answer, CommandError>) -> Void)
    func validate(_ request: ValidateCommand.Request, respond: @escaping (Result<ValidateCommand.Answer, CommandError>) -> Void)
    /// One resource's definition as the file has it (`task_get`, …): `not_found` naming those there are.
    func settingsResource(_ resource: SettingsResource, named name: String, respond: @escaping (Result<ResourceDefinition, CommandError>) -> Void)
    func modules(respond: @escaping (Result<ModulesCommand.Answer, CommandError>) -> Void)
}

