import Synchronization

/// Who may use the HTTP front now: the tokens and users of `"http"`, which a reload replaces
/// while the server keeps listening. Every request is checked against the current ones, so a
/// token or user removed (or demoted to `read`) by a reload is refused (or demoted) from its
/// next request, a session included: an operator revoking a leaked token must not have to
/// restart the agent for it to stop working.
public final class HTTPCredentials: Sendable {
    private let current: Mutex<(tokens: [APIToken], users: [String: APIUser])>

    public init(tokens: [APIToken] = [], users: [String: APIUser] = [:]) {
        current = Mutex((tokens, users))
    }

    public convenience init(_ settings: HTTPSettings?) {
        self.init(tokens: settings?.tokens ?? [], users: settings?.users ?? [:])
    }

    /// The tokens in force.
    public var tokens: [APIToken] { current.withLock { $0.tokens } }

    /// The user `name` in force, or nil.
    public func user(_ name: String) -> APIUser? { current.withLock { $0.users[name] } }

    /// Puts `settings`' tokens and users in force; true when they differ from those before.
    @discardableResult
    public func replace(with settings: HTTPSettings?) -> Bool {
        let tokens = settings?.tokens ?? [], users = settings?.users ?? [:]
        return current.withLock { current in
            guard current.tokens != tokens || current.users != users else { return false }
            current = (tokens, users)
            return true
        }
    }
}
