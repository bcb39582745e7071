import AgentBase
import HummingbirdBcrypt
import Synchronization

/// Bcrypt for the users' passwords. Hashing and checking take about 0.25 s at cost 12, so
/// checks run on two threads of their own, never on NIO's event loops nor on the
/// concurrency pool; at most ``mostWaiting`` checks wait or run at once (more are refused, so
/// that a flood of logins cannot queue without bound).
public final class PasswordHashing: Sendable {
    /// The cost `agent-control hash-password` uses unless told otherwise.
    public static let defaultCost = 12

    /// A bcrypt hash of `password` (run it off any event loop).
    public static func hash(_ password: String, cost: Int = defaultCost) -> String {
        Bcrypt.hash(password, cost: UInt8(clamping: cost))
    }

    /// Checked against when the user is unknown, so that the answer takes as long as for a
    /// known user (no guessing of names by the time). A hash of a random string at cost 12.
    static let unknownUserHash = "$2b$12$bQcUHNuLLOYGlpGVRhjfx.LN9RfTO6KHBHBRXmFyeDxPZX7.NXYLm"

    /// The checks' threads, shared by every front of the process (each check holds one for
    /// about 0.25 s). Ours, not NIO's: NIO stops the process when the system refuses it a thread.
    static let checks = BlockingPool(name: "agent-bcrypt", width: 2)

    let mostWaiting: Int
    private let waiting = Mutex(0)

    init(mostWaiting: Int = 16) {
        self.mostWaiting = mostWaiting
    }

    /// Whether `password` matches `hash`; nil when too many checks are already waiting, or
    /// when the system refuses the checks a thread (the caller answers "try again later").
    func verify(_ password: String, hash: String) async -> Bool? {
        let admitted = waiting.withLock { count in
            guard count < mostWaiting else { return false }
            count += 1
            return true
        }
        guard admitted else { return nil }
        defer { waiting.withLock { $0 -= 1 } }
        return await withCheckedContinuation { (answer: CheckedContinuation<Bool?, Never>) in
            if !Self.checks.submit({ answer.resume(returning: Bcrypt.verify(password, hash: hash)) }) { answer.resume(returning: nil) }
        }
    }
}
