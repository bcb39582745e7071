import AgentBase
import JSONSchema

/// Why a settings command (``SettingsCommands``) refused: a code a front maps to its own
/// status (HTTP 404, 400, 409, 412, 503), a message that says how to fix it, and the problems with
/// their JSON pointers where there are some.
struct SettingsCommandError: Error, CustomStringConvertible, Sendable {
    enum Code: String, Sendable {
        /// The process or module named is not in the settings.
        case notFound = "not_found"
        /// The request or the settings it would make are invalid; nothing was written.
        case invalid
        /// The name is taken, or something still names what a removal would remove.
        case conflict
        /// The file changed since the client read it (`if_match`).
        case preconditionFailed
        /// The agent cannot do it now (stopping, the file cannot be read or written).
        case unavailable
    }

    var code: Code
    var message: String
    /// `{"file"?, "pointer", "message"}` for each problem (settings errors, or where in the
    /// request the problem is).
    var errors: [JSONValue] = []
    /// Where in the request the problem is, when the request is at fault.
    var pointer: String?

    init(_ code: Code, _ message: String, errors: [JSONValue] = [], pointer: String? = nil) {
        self.code = code
        self.message = message
        self.errors = errors
        self.pointer = pointer
    }

    /// An invalid request, at `pointer` in it.
    static func request(_ pointer: String, _ message: String) -> SettingsCommandError {
        SettingsCommandError(.invalid, "\(pointer.isEmpty ? "the request" : pointer): \(message)",
                             errors: [["pointer": .string(pointer), "message": .string(message)]], pointer: pointer)
    }

    var description: String { message }

    /// The refusal every front answers: `{"ok": false, "code", "error", "pointer"?, "errors"?}`.
    var refusal: CommandError {
        let code: CommandError.Code = switch code {
        case .notFound: .notFound
        case .invalid: .invalid
        case .conflict: .conflict
        case .preconditionFailed: .preconditionFailed
        case .unavailable: .unavailable
        }
        return CommandError(code, message, pointer: pointer, errors: errors.isEmpty ? nil : errors)
    }
}
