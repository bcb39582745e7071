/// Who asked: recorded in the run history for every mutating command (the audit).
public struct CommandCaller: Sendable, CustomStringConvertible {
    /// `control`, `http`, `dashboard`, `chat` (a language model's tool call), `mcp`.
    public var front: String
    /// The user or token name, when the front authenticated one.
    public var user: String?
    /// The client's address, when known.
    public var address: String?
    /// The authenticated role (`read`, `admin`) when the front knows one; nil on the control
    /// socket (the operator). A chat's tool calls are authorised with it (``CommandAccess``).
    public var role: String?
    /// The control socket's client, as the kernel names its OS user: whom a chat message is
    /// from unless it names another (not an authenticated user: the socket's operator is).
    public var peerUser: String?
    /// Where a command that answers in pieces (`chat` with `stream`) sends each piece of text
    /// before its answer: called on the supervisor's loop, must not block (nil: the front wants
    /// the answer whole).
    public var partial: (@Sendable (String) -> Void)?

    public init(front: String, user: String? = nil, address: String? = nil, role: String? = nil, peerUser: String? = nil) {
        self.front = front
        self.user = user
        self.address = address
        self.role = role
        self.peerUser = peerUser
    }

    public var description: String {
        var text = front
        if let user { text += " user \(user)" }
        if let address { text += " from \(address)" }
        return text
    }
}
