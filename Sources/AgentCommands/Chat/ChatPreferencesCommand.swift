import AgentBase
import AgentStore
import JSONSchema

/// `chat_preferences`: a user's chat preferences (their own; an admin's choice of user). A store read.
package enum ChatPreferencesCommand: @preconcurrency StoreReadCommand {
    package struct Request: Codable, Sendable, Equatable {
        package var user: String?
        /// Set by ``scoped(_:caller:)``: whose they are.
        package var subject: String?

        enum CodingKeys: String, CodingKey { case user }

        package init(user: String? = nil) { self.user = user }
    }

    package struct Answer: Encodable, Sendable, Equatable {
        package let ok = true
        package var user: String
        package var preferences: JSONValue

        package init(user: String, preferences: ChatPreferences) {
            self.user = user
            self.preferences = preferences.json
        }
    }

    package static let name = "chat_preferences"
    package static let summary = "A user's chat preferences: language, units, verbosity and custom members (a non-admin's own)."
    package static let routes: [CommandRoute] = [.get("/api/chat/users/{user}/preferences")]
    package static let requestSchema: JSONValue = CommandSchema.object(["user": ChatUser.schema])
    package static let answerSchema: JSONValue = CommandSchema.object([
        "ok": ["const": true], "user": ["type": "string"],
        "preferences": CommandSchema.object(ChatPreferences.schemaMembers, required: ["custom"]),
    ], required: ["ok", "user", "preferences"], open: true)
    package static var examples: [(request: JSONValue, answer: Answer)] {
        [(["user": "ann"], Answer(user: "ann", preferences: ChatPreferences(language: "fr", units: "metric", verbosity: "brief", custom: ["timezone": "Europe/Paris"])))]
    }

    package static func scoped(_ request: Request, caller: CommandCaller) -> Result<Request, CommandError> {
        ChatUser.subject(requested: request.user, caller: caller).map { user in
            var scoped = request
            scoped.subject = user
            return scoped
        }
    }

    package static func read(_ request: Request, from reader: StoreReader) throws -> Answer {
        let user = request.subject ?? request.user ?? ChatUser.operatorName
        return Answer(user: user, preferences: ChatPreferences(stored: try reader.chatPreferences(user: user)))
    }
}
