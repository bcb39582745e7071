import AgentWork
import Foundation
import JSONSchema
import Testing

/// Every attempt of a run a record of its own (issue 36 item 4): written with the run's
/// change, each with its own end, tails, executor and agent; a stale claim's refused with its
/// run; bounded per run; gone with the run.
extension StoreContract {
    package static let attempts: [StoreCheck] = [
        StoreCheck("eachAttemptIsARecordOfItsOwnWrittenWithItsRun", eachAttemptIsARecordOfItsOwnWrittenWithItsRun),
        StoreCheck("aStaleClaimsAttemptIsRefusedWithItsRunAndTheRescuersIsKept", aStaleClaimsAttemptIsRefusedWithItsRunAndTheRescuersIsKept),
        StoreCheck("attemptsAreBoundedPerRunAndGoWithTheirRun", attemptsAreBoundedPerRunAndGoWithTheirRun),
    ]

    /// Run `run` at attempt `number`, its record `status` (ended unless running), with tails
    /// and error of its own.
    static func attempt(_ run: TaskRun, _ number: Int, _ status: TaskAttempt.Status, executor: String? = "pool-1", agent: String? = "host-a") -> TaskRun {
        var run = run
        run.attempt = number
        run.status = status == .running ? .running : status == .succeeded ? .succeeded : .retrying
        var record = TaskAttempt(number: number, startedAt: 1_000 + Double(number), executor: executor, agent: agent)
        if status != .running {
            record.status = status
            record.endedAt = 1_000.5 + Double(number)
            record.exitCode = status == .succeeded ? 0 : Int32(number)
            record.error = status == .succeeded ? nil : "exited with status \(number); last line of stderr: failure \(number)"
            record.stderrTail = "failure \(number)\n\u{FFFD} bytes"
            record.stdoutTail = "out \(number)"
        }
        run.attemptRecord = record
        return run
    }

    static func eachAttemptIsARecordOfItsOwnWrittenWithItsRun(_ stores: StoresUnderTest) async throws {
        let runs = stores.runs
        let queued = Self.run("a")
        runs.record(queued)
        runs.record(Self.attempt(queued, 1, .running))
        await runs.flush()
        #expect(try await runs.attempts(of: "a").map(\.status) == [.running], "an attempt is written as it starts")
        // The first ends and the second begins and ends in one batch of the writer.
        runs.record(Self.attempt(queued, 1, .failed))
        runs.record(Self.attempt(queued, 2, .running, executor: "pool-2", agent: "host-b"))
        runs.record(Self.attempt(queued, 2, .timedOut, executor: "pool-2", agent: "host-b"))
        runs.record(Self.attempt(queued, 3, .succeeded, executor: nil))
        await runs.flush()
        let stored = try await runs.attempts(of: "a").sorted { $0.number < $1.number }
        #expect(stored.map(\.number) == [1, 2, 3])
        #expect(stored.map(\.status) == [.failed, .timedOut, .succeeded])
        #expect(stored.map(\.error) == ["exited with status 1; last line of stderr: failure 1", "exited with status 2; last line of stderr: failure 2", nil])
        #expect(stored.map(\.exitCode) == [1, 2, 0])
        #expect(stored.map(\.stderrTail) == ["failure 1\n\u{FFFD} bytes", "failure 2\n\u{FFFD} bytes", "failure 3\n\u{FFFD} bytes"])
        #expect(stored.map(\.stdoutTail) == ["out 1", "out 2", "out 3"])
        #expect(stored.map(\.executor) == ["pool-1", "pool-2", nil])
        #expect(stored.map(\.agent) == ["host-a", "host-b", "host-a"])
        #expect(stored.map(\.startedAt) == [1_001, 1_002, 1_003])
        #expect(stored.map(\.endedAt) == [1_001.5, 1_002.5, 1_003.5])
        #expect(stored.allSatisfy { !$0.fromRunRecord })
        #expect(try await runs.run(id: "a")?.status == .succeeded)
        #expect(try await runs.attempts(of: "nope").isEmpty)
        // What a run recorded before attempts were shows: its last attempt, from its record.
        runs.record(Self.run("old", status: .failed))
        await runs.flush()
        let old = try #require(try await runs.run(id: "old"))
        let shown = TaskAttempt.shown(try await runs.attempts(of: "old"), of: old)
        #expect(shown.map(\.number) == [1])
        #expect(shown.first?.fromRunRecord == true)
        #expect(shown.first?.status == .failed)
        #expect(shown.first?.stderrTail == "boom\n")
    }

    static func aStaleClaimsAttemptIsRefusedWithItsRunAndTheRescuersIsKept(_ stores: StoresUnderTest) async throws {
        let runs = stores.runs
        runs.record(Self.run("job"))
        await runs.flush()
        let first = try #require(try await runs.claim(ClaimRequest(holder: "dead", room: ["t": 1], lease: Self.held)).first)
        #expect(try await runs.renew([try #require(first.claim)], lease: 0.2) == ["job"])
        try await Task.sleep(for: .seconds(0.5))
        let second = try #require(try await runs.claim(ClaimRequest(holder: "rescuer", room: ["t": 1], lease: Self.held)).first)
        #expect(second.attempt == 2)
        // The presumed-dead holder's attempt: refused with its run, by settle and by record.
        var late = Self.attempt(first, 1, .succeeded, agent: "dead")
        late.claim = first.claim
        #expect(try await runs.settle(late) == false)
        runs.record(late)
        await runs.flush()
        #expect(try await runs.attempts(of: "job").isEmpty, "no attempt of a claim that no longer holds its run")
        var done = Self.attempt(second, 2, .succeeded, agent: "rescuer")
        done.claim = second.claim
        done.endedAt = Date().timeIntervalSince1970
        runs.record(done)
        await runs.flush()
        let stored = try await runs.attempts(of: "job")
        #expect(stored.map(\.number) == [2])
        #expect(stored.first?.agent == "rescuer")
        // Shown: the dead holder's attempt has no record; the rescuer's is its own.
        let run = try #require(try await runs.run(id: "job"))
        #expect(TaskAttempt.shown(stored, of: run).map(\.number) == [2])
    }

    static func attemptsAreBoundedPerRunAndGoWithTheirRun(_ stores: StoresUnderTest) async throws {
        let runs = stores.runs
        let many = TaskAttempt.keptAttempts + 5
        let queued = Self.run("long")
        runs.record(queued)
        for number in 1...many {
            runs.record(Self.attempt(queued, number, number == many ? .succeeded : .failed))
            // Some batches of the writer, some attempts each.
            if number % 40 == 0 { await runs.flush() }
        }
        var last = Self.attempt(queued, many, .succeeded)
        last.endedAt = Date().timeIntervalSince1970
        runs.record(last)
        await runs.flush()
        let stored = try await runs.attempts(of: "long").sorted { $0.number < $1.number }
        #expect(stored.count == TaskAttempt.keptAttempts, "the first and the newest, no more")
        #expect(stored.first?.number == 1)
        #expect(stored.dropFirst().first?.number == many - TaskAttempt.keptAttempts + 2)
        #expect(stored.last?.number == many)
        let withTails = stored.filter { $0.stderrTail != nil }.map(\.number)
        #expect(withTails == Array(many - TaskAttempt.keptTails + 1...many), "only the newest keep their tails")
        #expect(stored.allSatisfy { $0.error != nil || $0.status == .succeeded }, "an attempt without its tails keeps its error")
        let run = try #require(try await runs.run(id: "long"))
        let shown = TaskAttempt.shown(stored, of: run)
        #expect(shown.count == TaskAttempt.keptAttempts)
        // Retention: a run's attempts go with it; an unfinished run's stay.
        runs.record(Self.attempt(Self.run("going-on"), 1, .running))
        await runs.flush()
        #expect(try await runs.prune(endedBefore: nil, keeping: 0) >= 1)
        #expect(try await runs.run(id: "long") == nil)
        #expect(try await runs.attempts(of: "long").isEmpty, "the attempts went with their run")
        #expect(try await runs.attempts(of: "going-on").map(\.number) == [1])
    }
}
