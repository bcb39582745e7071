import Hummingbird
import NIOCore

/// The request context of the HTTP front: Hummingbird's core storage, the client's address,
/// and who the request was authenticated as.
public struct AgentRequestContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    /// The client's socket address, described on demand (most requests never need it).
    var remoteSocketAddress: SocketAddress?
    /// The client's address (`127.0.0.1:53412`), for the audit and the login rate limit.
    public var remoteAddress: String? { remoteSocketAddress.map(Self.describe) }
    /// Who made the request, once authenticated (nil: nobody yet).
    public var identity: APIIdentity?

    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        remoteSocketAddress = source.channel.remoteAddress
    }

    static func describe(_ address: SocketAddress) -> String {
        guard let ip = address.ipAddress, let port = address.port else { return "\(address)" }
        return ip.contains(":") ? "[\(ip)]:\(port)" : "\(ip):\(port)"
    }
}

/// Who a request was authenticated as.
public struct APIIdentity: Sendable, Equatable {
    public enum Role: String, Sendable {
        /// May read everything, change nothing.
        case read
        /// May do everything.
        case admin
    }

    /// The user's name, or `token #N` for a bearer token.
    public var name: String
    public var role: Role
    /// By a session cookie (a browser): mutating requests need the CSRF checks.
    public var bySession: Bool
    /// What a token was granted besides its role (`publish`, `signal`): the commands of that
    /// grant it may send without the admin role.
    public var grants: Set<String>

    public init(name: String, role: Role, bySession: Bool, grants: Set<String> = []) {
        self.name = name
        self.role = role
        self.bySession = bySession
        self.grants = grants
    }

    /// Whether it may send a command that needs the admin role, or `grant`.
    func mayRun(needingAdminOr grant: String?) -> Bool {
        role == .admin || grant.map(grants.contains) == true
    }
}
