import AgentBase
import JSONSchema

/// Whose conversation a chat command is about. The operator (the control socket) and the admin
/// role may name any user; anyone else speaks, reads and clears as themself only.
package enum ChatUser {
    /// Who sends a message when nobody is named and the front knows no user (a socket whose
    /// peer has no name in the user database).
    package static let operatorName = "operator"

    /// Whether `caller` may act for any user: the control socket's operator or the admin role.
    package static func isAdmin(_ caller: CommandCaller) -> Bool {
        caller.role == "admin" || (caller.role == nil && caller.front == "control")
    }

    /// The user a message is from: the one named (`user`, else the context's `user`) when the
    /// caller may name anyone; else the caller's own — naming another is refused.
    package static func sender(requested: String?, context: JSONObject?, caller: CommandCaller) -> Result<String, CommandError> {
        let named = requested ?? context?["user"]?.stringValue
        if caller.front == "workflow" { return .success(named ?? "workflow") }
        if isAdmin(caller) { return .success(named ?? caller.user ?? caller.peerUser ?? operatorName) }
        return own(caller, naming: named, pointer: requested != nil ? "/user" : "/context/user")
    }

    /// The user a read or a clear is limited to: the one named (nil: every user) when the caller
    /// may name anyone; else the caller's own — naming another is refused.
    package static func scope(requested: String?, caller: CommandCaller) -> Result<String?, CommandError> {
        if isAdmin(caller) { return .success(requested) }
        return own(caller, naming: requested, pointer: "/user").map { Optional($0) }
    }

    /// The user whose preferences are read or changed: the one named, or the caller's own.
    package static func subject(requested: String?, caller: CommandCaller) -> Result<String, CommandError> {
        if isAdmin(caller) { return .success(requested ?? caller.user ?? caller.peerUser ?? operatorName) }
        return own(caller, naming: requested, pointer: "/user")
    }

    private static func own(_ caller: CommandCaller, naming named: String?, pointer: String) -> Result<String, CommandError> {
        guard let user = caller.user else {
            return .failure(CommandError(.forbidden, "this \(caller.front) caller has no user name: log in (or use a named token) to chat and to read or clear your conversations"))
        }
        if let named, named != user {
            return .failure(CommandError(.forbidden, "\(user) has the \(caller.role ?? "read") role: only the admin role may act for another user (\(JSONValue.string(named).serialized()) at \(pointer)); leave it out to use your own, \(user)", pointer: pointer))
        }
        return .success(user)
    }

    /// The request schema's `user` member.
    package static let schema: JSONValue = [
        "type": "string", "minLength": 1, "maxLength": 200, "pattern": .string(ControlCharacters.nonePattern),
        "description": "The user (default: the caller's own: the HTTP login or token name, the control socket's OS user). Only the admin role (and the control socket's operator) may name another.",
    ]
}
