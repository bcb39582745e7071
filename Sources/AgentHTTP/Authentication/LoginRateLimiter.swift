import Synchronization

/// Failed logins per client address and per user name: after `failures` within `window`
/// seconds, further attempts from that address or for that user are refused (429) until the
/// oldest failure leaves the window; the password is not even checked. Bounded: at most
/// `capacity` addresses and names are remembered (the stalest are forgotten first).
///
/// The user's limit does not hold at an address the user has logged in from (only that
/// address's own does): anyone may fail logins as `admin`, and they would otherwise keep the
/// admin out everywhere for as long as they went on.
final class LoginRateLimiter: Sendable {
    let failures: Int
    let window: Double
    let capacity: Int
    private let state = Mutex<[String: [Double]]>([:])
    /// The addresses each user logged in from, with the last time (at most `capacity`).
    private let known = Mutex<[String: Double]>([:])

    init(failures: Int, window: Double, capacity: Int = 10_000) {
        self.failures = max(1, failures)
        self.window = window
        self.capacity = max(2, capacity)
    }

    static func keys(address: String, user: String) -> [String] {
        ["address " + address, "user " + user.lowercased()]
    }

    private static func knownKey(address: String, user: String) -> String { user.lowercased() + "\u{0}" + address }

    /// Seconds until an attempt from `address` for `user` is allowed again; nil: allowed now.
    func retryAfter(address: String, user: String, now: Double = SessionTable.monotonicNow()) -> Int? {
        let knownAddress = known.withLock { $0[Self.knownKey(address: address, user: user)] != nil }
        return state.withLock { table in
            var wait = 0.0
            for key in Self.keys(address: address, user: user) where !(knownAddress && key.hasPrefix("user ")) {
                let recent = (table[key] ?? []).filter { $0 > now - window }
                table[key] = recent.isEmpty ? nil : recent
                if recent.count >= failures, let oldest = recent.first { wait = max(wait, oldest + window - now) }
            }
            return wait > 0 ? max(1, Int(wait.rounded(.up))) : nil
        }
    }

    /// Counts a failed attempt.
    func recordFailure(address: String, user: String, now: Double = SessionTable.monotonicNow()) {
        state.withLock { table in
            for key in Self.keys(address: address, user: user) {
                var recent = (table[key] ?? []).filter { $0 > now - window }
                recent.append(now)
                // Only the last `failures` matter for the decision.
                table[key] = Array(recent.suffix(failures))
            }
            if table.count > capacity {
                let stalest = table.sorted { ($0.value.last ?? 0) < ($1.value.last ?? 0) }.prefix(table.count - capacity).map(\.key)
                for key in stalest { table.removeValue(forKey: key) }
            }
        }
    }

    /// A successful login clears the user's failures (not the address's), and remembers the
    /// address as one the user logs in from.
    func recordSuccess(user: String, address: String, now: Double = SessionTable.monotonicNow()) {
        state.withLock { _ = $0.removeValue(forKey: "user " + user.lowercased()) }
        known.withLock { table in
            table[Self.knownKey(address: address, user: user)] = now
            if table.count > capacity {
                let stalest = table.sorted { $0.value < $1.value }.prefix(table.count - capacity).map(\.key)
                for key in stalest { table.removeValue(forKey: key) }
            }
        }
    }
}
