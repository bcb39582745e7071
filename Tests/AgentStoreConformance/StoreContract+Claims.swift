import AgentWork
import Foundation
import JSONSchema
import Testing

extension StoreContract {
    /// Claims: the queue's order, exclusive, leased and fenced.
    package static let claims: [StoreCheck] = [
        StoreCheck("claimsFollowPriorityThenDueTimeThenArrival", claimsFollowPriorityThenDueTimeThenArrival),
        StoreCheck("aClaimedRunIsRunningWithTheNextAttemptAndAClaimOfItsOwn", aClaimedRunIsRunningWithTheNextAttemptAndAClaimOfItsOwn),
        StoreCheck("claimersAtTheSameTimeNeverTakeTheSameRun", claimersAtTheSameTimeNeverTakeTheSameRun),
        StoreCheck("aLapsedLeaseIsRescuedAndTheStaleHoldersResultIsRefused", aLapsedLeaseIsRescuedAndTheStaleHoldersResultIsRefused),
        StoreCheck("theNextLapseOfAnotherHoldersLeaseIsKnownSoThatARescueNeedNotWaitForThePoll", theNextLapseOfAnotherHoldersLeaseIsKnownSoThatARescueNeedNotWaitForThePoll),
        StoreCheck("aRunLetGoForARetryIsClaimableWhenDueWithTheSameId", aRunLetGoForARetryIsClaimableWhenDueWithTheSameId),
        StoreCheck("aClaimWithoutRoomTakesNothingAndNoTaskHasNoLapse", aClaimWithoutRoomTakesNothingAndNoTaskHasNoLapse),
        StoreCheck("aClaimTakesNoneOfTheRunsItExcludesLapsedOrQueued", aClaimTakesNoneOfTheRunsItExcludesLapsedOrQueued),
    ]

    /// A holder's own runs (running there still, or ended with the end not written yet) are
    /// not claimed again when their lease lapsed: they ran twice after an outage.
    static func aClaimTakesNoneOfTheRunsItExcludesLapsedOrQueued(_ stores: StoresUnderTest) async throws {
        let runs = stores.runs
        runs.record(Self.run("mine"))
        await runs.flush()
        let held = try #require(try await runs.claim(ClaimRequest(holder: "a", room: ["t": 1], lease: 0.2)).first)
        runs.record(Self.run("queued"))
        await runs.flush()
        try await Task.sleep(for: .seconds(0.5))
        let excluded = try await runs.claim(ClaimRequest(holder: "a", room: ["t": 5], lease: Self.held, excluding: [held.id, "queued"]))
        #expect(excluded.isEmpty, "\(excluded.map(\.id))")
        let taken = try await runs.claim(ClaimRequest(holder: "a", room: ["t": 5], lease: Self.held, excluding: ["queued"]))
        #expect(taken.map(\.id) == ["mine"], "the lapsed run is claimed once it is not excluded")
    }

    static func claimsFollowPriorityThenDueTimeThenArrival(_ stores: StoresUnderTest) async throws {
        let runs = stores.runs
        let now = Date().timeIntervalSince1970
        runs.record(Self.run("low", priority: .low, queuedAt: now - 50))
        runs.record(Self.run("normal-late", queuedAt: now - 10))
        runs.record(Self.run("normal-early", queuedAt: now - 20))
        runs.record(Self.run("normal-same-time-1", queuedAt: now - 5))
        runs.record(Self.run("normal-same-time-2", queuedAt: now - 5))
        runs.record(Self.run("critical", priority: .critical, queuedAt: now))
        runs.record(Self.run("high-not-yet", priority: .high, notBefore: now + 3600))
        runs.record(Self.run("other-task", task: "other", priority: .critical))
        runs.record(Self.run("done", status: .succeeded))
        await runs.flush()
        var order: [String] = []
        for _ in 0..<7 {
            order += try await runs.claim(ClaimRequest(holder: "a", room: ["t": 1], lease: Self.held)).map(\.id)
        }
        #expect(order == ["critical", "normal-early", "normal-late", "normal-same-time-1", "normal-same-time-2", "low"],
                "a run not due yet, another task's and a finished one are not taken")
        let other = try await runs.claim(ClaimRequest(holder: "a", room: ["other": 5, "t": 5], lease: Self.held))
        #expect(other.map(\.id) == ["other-task"])
    }

    static func aClaimedRunIsRunningWithTheNextAttemptAndAClaimOfItsOwn(_ stores: StoresUnderTest) async throws {
        let runs = stores.runs
        runs.record(Self.run("x"))
        runs.record(Self.run("y"))
        await runs.flush()
        let claimed = try await runs.claim(ClaimRequest(holder: "host-a", room: ["t": 2], lease: Self.held))
        #expect(claimed.map(\.id) == ["x", "y"])
        for run in claimed {
            #expect(run.status == .running)
            #expect(run.attempt == 1)
            #expect(run.startedAt != nil)
            #expect(run.claim?.holder == "host-a")
            #expect(run.claim?.runID == run.id)
        }
        let fences = claimed.compactMap(\.claim?.fence)
        #expect(Set(fences).count == 2, "each claim has its own fencing token")
        // Read back (PostgreSQL's claim writes columns, not the record: they are laid over it).
        let stored = try #require(try await runs.run(id: "x"), "the claim is in the store")
        #expect(stored.status == .running)
        #expect(stored.attempt == 1)
        #expect(stored.agent == "host-a")
        #expect(stored.startedAt == claimed.first?.startedAt)
        #expect(try await runs.list(RunFilter(task: "t", limit: 10)).map(\.run.attempt) == [1, 1])
        #expect(try await runs.claim(ClaimRequest(holder: "host-b", room: ["t": 5], lease: Self.held)).isEmpty, "a held run is not claimed again")
    }

    static func claimersAtTheSameTimeNeverTakeTheSameRun(_ stores: StoresUnderTest) async throws {
        let runs = stores.runs
        for index in 0..<200 { runs.record(Self.run("run\(index)")) }
        await runs.flush()
        let taken = try await withThrowingTaskGroup(of: [String].self) { group in
            for holder in 0..<4 {
                group.addTask {
                    var mine: [String] = []
                    while true {
                        let batch = try await runs.claim(ClaimRequest(holder: "h\(holder)", room: ["t": 7], lease: Self.held))
                        if batch.isEmpty { return mine }
                        mine += batch.map(\.id)
                    }
                }
            }
            var all: [[String]] = []
            for try await list in group { all.append(list) }
            return all
        }
        let flat = taken.flatMap { $0 }
        #expect(flat.count == 200)
        #expect(Set(flat).count == 200, "a run was claimed twice")
    }

    static func aLapsedLeaseIsRescuedAndTheStaleHoldersResultIsRefused(_ stores: StoresUnderTest) async throws {
        let runs = stores.runs
        runs.record(Self.run("job"))
        await runs.flush()
        let first = try #require(try await runs.claim(ClaimRequest(holder: "dead", room: ["t": 1], lease: Self.held)).first)
        // Renewed while it lives: still held.
        #expect(try await runs.renew([try #require(first.claim)], lease: Self.held) == ["job"])
        #expect(try await runs.claim(ClaimRequest(holder: "rescuer", room: ["t": 1], lease: Self.held)).isEmpty)
        // The holder's last renewal is short, then it falls silent: the lease lapses.
        #expect(try await runs.renew([try #require(first.claim)], lease: 0.2) == ["job"])
        try await Task.sleep(for: .seconds(0.5))
        let second = try #require(try await runs.claim(ClaimRequest(holder: "rescuer", room: ["t": 1], lease: Self.held)).first,
                                  "a run whose lease lapsed is claimable again")
        #expect(second.id == "job", "the same run, so the same idempotency key")
        #expect(second.attempt == 2)
        #expect(second.interruptions == 1, "the dead holder's attempt was interrupted")
        #expect(try #require(second.claim).fence > (try #require(first.claim).fence))
        // The presumed-dead holder wakes up with a result: refused, by its token.
        var late = first
        late.status = .succeeded
        late.output = ["by": "dead"]
        late.endedAt = Date().timeIntervalSince1970
        #expect(try await runs.settle(late) == false)
        #expect(try await runs.renew([try #require(first.claim)], lease: Self.held).isEmpty, "the stale holder cannot renew either")
        let refusedBefore = runs.refusedWrites
        runs.record(late)
        await runs.flush()
        #expect(runs.refusedWrites == refusedBefore + 1, "a fire-and-forget write of a stale holder is refused and counted")
        let rescued = try #require(try await runs.run(id: "job"))
        #expect(rescued.status == .running)
        #expect(rescued.attempt == 2, "each claim is an attempt, though neither wrote the record")
        #expect(rescued.agent == "rescuer")
        #expect(rescued.interruptions == 1)
        var done = second
        done.status = .succeeded
        done.output = ["by": "rescuer"]
        done.endedAt = Date().timeIntervalSince1970
        #expect(try await runs.settle(done))
        let stored = try #require(try await runs.run(id: "job"))
        #expect(stored.status == .succeeded)
        #expect(stored.output == ["by": "rescuer"])
        #expect(stored.attempt == 2)
        #expect(stored.interruptions == 1)
    }

    static func theNextLapseOfAnotherHoldersLeaseIsKnownSoThatARescueNeedNotWaitForThePoll(_ stores: StoresUnderTest) async throws {
        let runs = stores.runs
        runs.record(Self.run("held"))
        runs.record(Self.run("elsewhere", task: "u"))
        await runs.flush()
        #expect(try await runs.nextLapse(tasks: ["t"], holder: "b") == nil, "nothing is held")
        let claimed = try await runs.claim(ClaimRequest(holder: "a", room: ["t": 1, "u": 1], lease: 3600))
        #expect(claimed.count == 2)
        let left = try #require(try await runs.nextLapse(tasks: ["t"], holder: "b"))
        #expect(left > 0 && left <= 3600, "seconds until a's lease lapses: \(left)")
        #expect(try await runs.nextLapse(tasks: ["t"], holder: "a") == nil, "a holder's own leases are not another's")
        #expect(try await runs.nextLapse(tasks: ["v"], holder: "b") == nil, "only the tasks asked about")
        var done = try #require(claimed.first { $0.id == "held" })
        done.status = .succeeded
        done.endedAt = Date().timeIntervalSince1970
        #expect(try await runs.settle(done))
        #expect(try await runs.nextLapse(tasks: ["t"], holder: "b") == nil, "a finished run holds no lease")
        runs.record(Self.run("short"))
        await runs.flush()
        #expect(try await runs.claim(ClaimRequest(holder: "a", room: ["t": 1], lease: 1)).map(\.id) == ["short"])
        try await Task.sleep(for: .seconds(1.5))
        #expect(try await runs.nextLapse(tasks: ["t"], holder: "b") == 0, "a lease that lapsed already: claim now")
    }

    static func aRunLetGoForARetryIsClaimableWhenDueWithTheSameId(_ stores: StoresUnderTest) async throws {
        let runs = stores.runs
        runs.record(Self.run("flaky"))
        runs.record(Self.run("later"))
        await runs.flush()
        let claimed = try await runs.claim(ClaimRequest(holder: "a", room: ["t": 2], lease: Self.held))
        #expect(claimed.map(\.id) == ["flaky", "later"])
        // Both fail and are let go: one due again now (its backoff over), one in an hour (far
        // enough ahead that no pause of this test process makes it due before the next claim).
        for var run in claimed {
            run.status = .retrying
            run.error = "exit 1"
            run.nextAttemptAt = Date().timeIntervalSince1970 + (run.id == "flaky" ? -0.1 : 3_600)
            runs.record(run)
        }
        await runs.flush()
        #expect(runs.refusedWrites == 0)
        let retried = try await runs.claim(ClaimRequest(holder: "b", room: ["t": 5], lease: Self.held))
        #expect(retried.map(\.id) == ["flaky"], "a run let go is claimable when due, not before its next attempt")
        let again = try #require(retried.first)
        #expect(again.id == "flaky")
        #expect(again.attempt == 2)
        #expect(again.claim?.holder == "b")
    }

    static func aClaimWithoutRoomTakesNothingAndNoTaskHasNoLapse(_ stores: StoresUnderTest) async throws {
        let runs = stores.runs
        runs.record(Self.run("waiting"))
        await runs.flush()
        #expect(try await runs.claim(ClaimRequest(holder: "a", room: [:], lease: Self.held)).isEmpty)
        #expect(try await runs.claim(ClaimRequest(holder: "a", room: ["t": 0], lease: Self.held)).isEmpty)
        #expect(try await runs.claim(ClaimRequest(holder: "a", room: ["t": -1], lease: Self.held)).isEmpty)
        #expect(try await runs.claim(ClaimRequest(holder: "a", room: ["none": 3], lease: Self.held)).isEmpty)
        #expect(try await runs.renew([], lease: Self.held).isEmpty)
        #expect(try await runs.nextLapse(tasks: [], holder: "b") == nil)
        #expect(try await runs.run(id: "waiting")?.status == .queued, "left as it was")
    }
}
