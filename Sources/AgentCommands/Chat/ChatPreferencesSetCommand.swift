import AgentBase
import JSONSchema

/// `chat_preferences_set`: changes a user's chat preferences (their own; an admin's any user's):
/// each member given replaces the one kept, `custom`'s members one by one. `custom` must pass
/// the chatbot's `preferences_schema`, refused at its pointer otherwise.
package enum ChatPreferencesSetCommand: AgentCommand {
    package typealias Host = any ChatCommandHost

    package struct Request: Codable, Sendable, Equatable {
        package var user: String?
        package var language: String?
        package var units: String?
        package var verbosity: String?
        package var custom: JSONObject?

        package init(user: String? = nil, language: String? = nil, units: String? = nil, verbosity: String? = nil, custom: JSONObject? = nil) {
            self.user = user
            self.language = language
            self.units = units
            self.verbosity = verbosity
            self.custom = custom
        }
    }

    package static let name = "chat_preferences_set"
    package static let summary = "Changes a user's chat preferences (language, units, verbosity, custom members checked by the chatbot's preferences_schema); a non-admin changes only their own."
    package static let routes: [CommandRoute] = [CommandRoute("PUT", "/api/chat/users/{user}/preferences")]
    package static let mutating = true
    /// A person's own preferences: any role; another user's need the admin role (``ChatUser``).
    package static let requiresAdmin = false
    package static let requestSchema: JSONValue = {
        var members = ChatPreferences.schemaMembers
        members["user"] = ChatUser.schema
        return CommandSchema.object(members)
    }()
    package static let answerSchema: JSONValue = ChatPreferencesCommand.answerSchema
    package static var examples: [(request: JSONValue, answer: ChatPreferencesCommand.Answer)] {
        [(["user": "ann", "language": "fr", "custom": ["timezone": "Europe/Paris"]],
          ChatPreferencesCommand.Answer(user: "ann", preferences: ChatPreferences(language: "fr", custom: ["timezone": "Europe/Paris"])))]
    }

    package static func run(_ request: Request, on host: any ChatCommandHost, caller: CommandCaller,
                            respond: @escaping (Result<ChatPreferencesCommand.Answer, CommandError>) -> Void) {
        switch ChatUser.subject(requested: request.user, caller: caller) {
        case .failure(let refusal): respond(.failure(refusal))
        case .success(let user): host.setPreferences(request, user: user, respond: respond)
        }
    }
}
