import AgentLoop
import CAgentSystem
import Foundation

/// Who is at the other end of a control connection, as the kernel says (SO_PEERCRED): the
/// user name a chat message from `agent-control chat` is kept under unless it names another.
@LoopActor
enum SocketPeer {
    /// Names by user id, looked up once each (the user database may be slow to ask).
    private static var names: [UInt32: String] = [:]

    /// The peer's user name; its id as text when the user database has no name for it, nil
    /// when the kernel does not say.
    static func userName(of fd: Int32) -> String? {
        let uid = agent_peer_uid(fd)
        guard uid >= 0, let id = UInt32(exactly: uid) else { return nil }
        if let known = names[id] { return known }
        var entry = passwd()
        var found: UnsafeMutablePointer<passwd>?
        var buffer = [CChar](repeating: 0, count: 4096)
        let name: String
        if getpwuid_r(id, &entry, &buffer, buffer.count, &found) == 0, found != nil, let pointer = entry.pw_name {
            name = String(cString: pointer)
        } else {
            name = String(id)
        }
        names[id] = name
        return name
    }
}
