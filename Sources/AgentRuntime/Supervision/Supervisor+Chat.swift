import AgentBase
import AgentCore
import AgentLoop
import AgentSupervision
import Foundation
import JSONSchema
import Logging

extension Supervisor {
    /// Control requests that answer later (chat, the settings commands) or right away
    /// (everything else).
    func handleControl(_ request: JSONValue, respond: @escaping (JSONValue) -> Void) {
        switch request["command"]?.stringValue {
        case "chat"?: chat.send(request, respond: respond)
        case "settings_get"?, "settings_change"?, "validate"?, "modules"?:
            settingsHost.answer(request, supervisor: self, respond: respond)
        case "reload"?: reload(respond: respond)
        case "chat_history"?: chat.history(request, respond: respond)
        case "chat_clear"?: chat.clear(request, respond: respond)
        default: respond(handleControl(request))
        }
    }
}
