@testable import AgentBase
@testable import AgentHTTP
import AgentTestSupport
import Foundation
import Testing

/// The session table and the login limiter on their own: expiry, bounds, windows.
@Suite(.ownThreads) struct SessionTableTests {
    @Test func aSessionEndsAfterItsTimeWithoutARequestAndALogout() throws {
        // A clock the test steps: a loaded machine's stall cannot end the session early.
        let clock = LockedValue(1000.0)
        let table = SessionTable(ttl: 2, now: { clock.withLock { $0 } })
        let (id, csrf) = table.create(user: "alice", role: .admin, passwordHash: "h")
        #expect(id != csrf && id.count == 43 && csrf.count == 43)
        // Each request pushes the end back: 4 × 1.5 s is past the first end, not past any.
        for _ in 0..<4 {
            clock.withLock { $0 += 1.5 }
            #expect(table.find(id)?.user == "alice")
        }
        clock.withLock { $0 += 1.99 }
        #expect(table.find(id)?.user == "alice", "still in its time")
        clock.withLock { $0 += 2.01 }
        #expect(table.find(id) == nil)
        #expect(table.find(id) == nil, "gone for good")
        let (other, _) = table.create(user: "bob", role: .read, passwordHash: "h")
        #expect(table.remove(other)?.role == .read)
        #expect(table.find(other) == nil)
    }

    @Test func theTableHoldsAtMostItsCapacity() {
        let table = SessionTable(ttl: 3600, capacity: 3)
        let ids = (0..<5).map { table.create(user: "u\($0)", role: .read, passwordHash: "h").id }
        #expect(table.count == 3)
        // The oldest-expiring sessions made room; the newest are there.
        #expect(table.find(ids[0]) == nil && table.find(ids[1]) == nil)
        #expect(table.find(ids[4])?.user == "u4")
        #expect(Set(ids).count == 5)
    }

    @Test func theLimiterRefusesUntilTheOldestFailureLeavesTheWindow() {
        let limiter = LoginRateLimiter(failures: 3, window: 100)
        for time in [0.0, 10, 20] {
            #expect(limiter.retryAfter(address: "10.0.0.1", user: "alice", now: time) == nil)
            limiter.recordFailure(address: "10.0.0.1", user: "Alice", now: time)
        }
        #expect(limiter.retryAfter(address: "10.0.0.1", user: "alice", now: 30) == 70)
        #expect(limiter.retryAfter(address: "10.0.0.9", user: "ALICE", now: 30) == 70)
        #expect(limiter.retryAfter(address: "10.0.0.1", user: "bob", now: 30) == 70)
        #expect(limiter.retryAfter(address: "10.0.0.9", user: "bob", now: 30) == nil)
        #expect(limiter.retryAfter(address: "10.0.0.1", user: "alice", now: 100.5) == nil)
    }

    /// Anyone may fail logins as `admin`: the user's limit would keep the admin out everywhere.
    @Test func aUsersLimitDoesNotHoldAtAnAddressTheUserLoggedInFrom() {
        let limiter = LoginRateLimiter(failures: 3, window: 100)
        limiter.recordSuccess(user: "admin", address: "10.0.0.1", now: 0)
        for time in [10.0, 11, 12] { limiter.recordFailure(address: "192.0.2.7", user: "admin", now: time) }
        #expect(limiter.retryAfter(address: "192.0.2.7", user: "admin", now: 13) == 97, "the attacker's address is held")
        #expect(limiter.retryAfter(address: "10.0.0.2", user: "Admin", now: 13) == 97, "a new address is held by the user's limit")
        #expect(limiter.retryAfter(address: "10.0.0.1", user: "ADMIN", now: 13) == nil, "the admin's own address is not")
        // That address's own limit still holds there.
        for time in [20.0, 21, 22] { limiter.recordFailure(address: "10.0.0.1", user: "admin", now: time) }
        #expect(limiter.retryAfter(address: "10.0.0.1", user: "admin", now: 23) == 97)
    }

    @Test func theLimiterForgetsTheStalestBeyondItsCapacity() {
        let limiter = LoginRateLimiter(failures: 1, window: 100, capacity: 4)
        for index in 0..<10 { limiter.recordFailure(address: "10.0.0.\(index)", user: "u\(index)", now: Double(index)) }
        #expect(limiter.retryAfter(address: "10.0.0.9", user: "u9", now: 10) != nil)
        #expect(limiter.retryAfter(address: "10.0.0.0", user: "u0", now: 10) == nil)
    }

    @Test func secretsCompareEqualOnlyWhenEqual() {
        #expect(ConstantTime.equals("abcdef", "abcdef"))
        #expect(!ConstantTime.equals("abcdef", "abcdeg"))
        #expect(!ConstantTime.equals("abcdef", "abcde"))
        #expect(!ConstantTime.equals("", "a"))
        #expect(ConstantTime.equals("", ""))
    }
}
