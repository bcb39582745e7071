import Foundation
import Synchronization

/// The login sessions of browsers: random 256-bit ids → user, role and CSRF token, kept in
/// memory (a restart logs everyone out). A session ends after `ttl` seconds without a
/// request; the table holds at most `capacity` sessions (the oldest-expiring one makes room).
final class SessionTable: Sendable {
    /// The cookie that carries the session id (HttpOnly).
    static let sessionCookie = "agent_session"
    /// The cookie that carries the CSRF token, readable by the dashboard's JavaScript, which
    /// echoes it in `X-CSRF-Token` (double submit).
    static let csrfCookie = "agent_csrf"

    struct Session: Sendable {
        var user: String
        var role: APIIdentity.Role
        /// The user's password hash at the login: a session outlives no change of it (a reload
        /// that sets a new password ends the sessions of the old one).
        var passwordHash: String
        /// What mutating requests of this session must send in `X-CSRF-Token`.
        var csrfToken: String
        /// Monotonic seconds after which the session is over.
        var expires: Double
    }

    let ttl: Double
    let capacity: Int
    private let sessions = Mutex<[String: Session]>([:])
    /// The clock the sessions' ends are on (``monotonicNow()`` but in tests, which step it).
    private let now: @Sendable () -> Double

    init(ttl: Double, capacity: Int = 10_000, now: @escaping @Sendable () -> Double = SessionTable.monotonicNow) {
        self.ttl = ttl
        self.capacity = max(1, capacity)
        self.now = now
    }

    /// Seconds on a clock that only goes forward.
    static func monotonicNow() -> Double { Double(DispatchTime.now().uptimeNanoseconds) / 1e9 }

    /// 32 bytes from the system's secure generator (getrandom), as unpadded base64url.
    static func randomToken() -> String {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<32).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        return Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }

    /// A new session for `user`: its id and CSRF token.
    func create(user: String, role: APIIdentity.Role, passwordHash: String) -> (id: String, csrfToken: String) {
        let id = Self.randomToken(), csrf = Self.randomToken()
        let now = self.now()
        sessions.withLock { table in
            if table.count >= capacity { table = table.filter { $0.value.expires > now } }
            if table.count >= capacity, let oldest = table.min(by: { $0.value.expires < $1.value.expires })?.key {
                table.removeValue(forKey: oldest)
            }
            table[id] = Session(user: user, role: role, passwordHash: passwordHash, csrfToken: csrf, expires: now + ttl)
        }
        return (id, csrf)
    }

    /// The live session `id`, its expiry pushed back (nil: unknown or expired).
    func find(_ id: String) -> Session? {
        let now = self.now()
        return sessions.withLock { table in
            guard var session = table[id] else { return nil }
            guard session.expires > now else {
                table.removeValue(forKey: id)
                return nil
            }
            session.expires = now + ttl
            table[id] = session
            return session
        }
    }

    /// Ends session `id` (logout).
    @discardableResult
    func remove(_ id: String) -> Session? {
        sessions.withLock { $0.removeValue(forKey: id) }
    }

    var count: Int { sessions.withLock { $0.count } }
}
