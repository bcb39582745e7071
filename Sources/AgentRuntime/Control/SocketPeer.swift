import AgentBase
import AgentLoop
import CAgentSystem
import Foundation

/// Who is at the other end of a control connection, as the kernel says (SO_PEERCRED): the
/// user name a chat message from `agent-control chat` is kept under unless it names another.
///
/// The user id comes from the socket at once; its name from the user database, which may be
/// slow or hang (NSS asking LDAP or sssd), so it is looked up on a thread of its own, never on
/// the supervisor's loop: the request waits for it (at most ``waitLimit``, then goes on under
/// the id as text), the loop serves everyone else meanwhile. Names are kept once found (at most
/// ``maximumNames`` ids; past that the table starts over).
@LoopActor
final class SocketPeer {
    /// Looks a user id's name up (blocking; nil: the database has none).
    typealias Lookup = @Sendable (UInt32) -> String?

    /// The most ids whose names are kept.
    static let maximumNames = 1024

    private let loop: EventLoop
    private let lookup: Lookup
    private let waitLimit: Double
    private var names: [UInt32: String] = [:]
    /// Ids being looked up, with the requests that wait for their name.
    private var waiting: [UInt32: [(String) -> Void]] = [:]
    /// Ids whose lookup has not answered yet (waited for, or past ``waitLimit``).
    private var inFlight: Set<UInt32> = []
    /// Two threads: one lookup that hangs does not hold every other user's.
    private let pool = BlockingPool(name: "agent-peer-name", width: 2)

    init(loop: EventLoop, waitLimit: Double = 5, lookup: @escaping Lookup = SocketPeer.passwordDatabaseName) {
        self.loop = loop
        self.waitLimit = waitLimit
        self.lookup = lookup
    }

    /// Calls `done` with the peer's user name (its id as text when the user database has no
    /// name for it or does not answer within ``waitLimit``; nil when the kernel does not say):
    /// at once when the name is known, else on the loop once it is looked up.
    func userName(of fd: Int32, _ done: @escaping (String?) -> Void) {
        let uid = agent_peer_uid(fd)
        guard uid >= 0, let id = UInt32(exactly: uid) else { return done(nil) }
        if let known = names[id] { return done(known) }
        if waiting[id] != nil { return waiting[id]!.append(done) }
        // Asked already, and past its wait: the database hangs; no second lookup behind it.
        if inFlight.contains(id) { return done(String(id)) }
        inFlight.insert(id)
        waiting[id] = [done]
        let lookup = self.lookup
        let inbox = loop.inbox
        let found = LoopOwned({ [weak self] (name: String?) in self?.found(name ?? String(id), for: id) })
        pool.submit {
            let name = lookup(id)
            inbox.post { found.value(name) }
        }
        loop.schedule(after: waitLimit) { [weak self] in
            // The database does not answer: the waiting requests go on under the id.
            guard let self, let late = waiting.removeValue(forKey: id) else { return }
            for request in late { request(String(id)) }
        }
    }

    private func found(_ name: String, for id: UInt32) {
        inFlight.remove(id)
        if names.count >= Self.maximumNames { names.removeAll() }
        names[id] = name
        for request in waiting.removeValue(forKey: id) ?? [] { request(name) }
    }

    /// The name `getpwuid_r` gives (blocking: NSS may ask a directory server).
    nonisolated static func passwordDatabaseName(_ id: UInt32) -> String? {
        var entry = passwd()
        var found: UnsafeMutablePointer<passwd>?
        var buffer = [CChar](repeating: 0, count: 4096)
        guard getpwuid_r(id, &entry, &buffer, buffer.count, &found) == 0, found != nil, let pointer = entry.pw_name else { return nil }
        return String(cString: pointer)
    }
}
