#if Fleet
import AgentFleet
import AgentTestSupport
@testable import AgentWork
import Foundation
import JSONSchema
import Logging
import Testing

/// Fleet stores that cannot get a connection (issue 41 item 4: every PostgreSQL case of
/// PostgresStoreConformanceTests, 23 stores connecting at the same moment, once waited forever for a
/// first connection): each connects and answers, or fails saying why, within a deadline.
@Suite(.ownThreads, .serialized) struct FleetConnectionLimitTests {
    @Test(.enabled(if: PostgresTestServer.unavailableReason == nil, "needs a PostgreSQL server: \(PostgresTestServer.unavailableReason ?? "")"))
    func storesConnectingAtOnceBeyondTheServersConnectionLimitEachAnswerOrFailSayingSo() async throws {
        let server = try PostgresTestServer.makePrivate(maxConnections: 10)
        defer { server.stop() }
        let outcomes = try await Self.connectAtOnce(24, to: server)
        let failures = outcomes.failures
        #expect(outcomes.answered >= 1, "the first stores connect:\n\(outcomes.report)")
        #expect(!failures.isEmpty, "24 stores cannot all connect to a server of 10 connections:\n\(outcomes.report)")
        for failure in failures {
            #expect(failure.contains("too many clients") && failure.contains("max_connections"), "a refusal says why: \(failure)")
        }
        await outcomes.shutDown()
    }

    @Test(.enabled(if: PostgresTestServer.unavailableReason == nil, "needs a PostgreSQL server: \(PostgresTestServer.unavailableReason ?? "")"))
    func aStoreWhoseServerAcceptsButNeverAnswersFailsWithinTheDeadlineSayingSo() async throws {
        let server = try PostgresTestServer.makePrivate()
        defer { server.stop() }
        // The postmaster stopped: the kernel still accepts TCP connections on its port, and
        // nobody answers them (a hung or overloaded server).
        let postmaster = try #require(pid_t(try String(contentsOfFile: server.folder + "/data/postmaster.pid", encoding: .utf8)
            .split(separator: "\n").first.map(String.init) ?? ""))
        kill(postmaster, SIGSTOP)
        defer { kill(postmaster, SIGCONT) }
        let outcomes = try await Self.connectAtOnce(3, to: server, database: "postgres", within: 15)
        for failure in outcomes.failures {
            #expect(failure.contains("no answer within 20 s"), "the error says the server did not answer: \(failure)")
        }
        #expect(outcomes.failures.count == 3, "\(outcomes.report)")
    }

    /// `count` stores connecting at the same moment, each then making a round trip; waits for
    /// each to answer or fail — for two minutes at most (then the test fails naming the stores
    /// still waiting). The stores keep their connections until
    /// ``StoreOutcomes/shutDown()``, as test cases that run side by side do.
    /// `within`: each store's deadline; by default the stores' own (30 s), which gives a loaded
    /// machine's pool the time for attempts that meet the server's refusal.
    static func connectAtOnce(_ count: Int, to server: PostgresTestServer, database: String? = nil,
                              within: Double = PostgresFleetStore.connectDeadline) async throws -> StoreOutcomes {
        let databases = try (0..<count).map { _ in try database ?? server.makeDatabase() }
        let outcomes = StoreOutcomes(count: count)
        for (index, database) in databases.enumerated() {
            let json: JSONValue = ["postgres": .string(server.url(database: database)), "password": "${env:PGPASSWORD}",
                                   "agent_id": .string("limit-\(index)")]
            let settings = try #require(try FleetSettings(json, environment: ["PGPASSWORD": PostgresTestServer.password]))
            Task {
                do {
                    // Warnings only: the pool logs each refused attempt.
                    var logger = Logger(label: "store \(index)")
                    logger.logLevel = .warning
                    let store = try await PostgresFleetStore.connect(settings, logger: logger, within: within)
                    outcomes.update(index) { $0.store = store }
                    _ = try await store.runs.list(RunFilter(limit: 1))
                    outcomes.update(index) { $0.state = .answered }
                } catch {
                    outcomes.update(index) { $0.state = .failed("\(error)") }
                }
            }
        }
        let deadline = Date().addingTimeInterval(120)
        while !outcomes.allDone, Date() < deadline { try await Task.sleep(for: .milliseconds(100)) }
        print("FleetConnectionLimitTests: \(count) stores:\n\(outcomes.report)")
        if !outcomes.allDone {
            Issue.record("stores still waiting after 2 minutes:\n\(outcomes.report)")
        }
        return outcomes
    }
}

/// What each store of a test came to.
final class StoreOutcomes: @unchecked Sendable {
    enum State: Equatable {
        case waiting, answered
        case failed(String)
    }

    struct Outcome {
        var state = State.waiting
        var since = Date()
        var store: PostgresFleetStore?
    }

    private let lock = NSLock()
    private var outcomes: [Outcome]
    private let started = Date()

    init(count: Int) { outcomes = Array(repeating: Outcome(), count: count) }

    func update(_ index: Int, _ change: (inout Outcome) -> Void) {
        lock.withLock {
            change(&outcomes[index])
            outcomes[index].since = Date()
        }
    }

    var allDone: Bool { lock.withLock { outcomes.allSatisfy { $0.state != .waiting } } }
    var answered: Int { lock.withLock { outcomes.filter { $0.state == .answered }.count } }
    var failures: [String] {
        lock.withLock { outcomes.compactMap { if case .failed(let message) = $0.state { message } else { nil } } }
    }

    var report: String {
        lock.withLock {
            outcomes.enumerated().map { index, outcome in
                "  store \(index): \(outcome.state) at \(Int(outcome.since.timeIntervalSince(started))) s"
            }.joined(separator: "\n")
        }
    }

    /// Closes the stores that connected.
    func shutDown() async {
        for store in lock.withLock({ outcomes.compactMap(\.store) }) { await store.shutDown() }
    }
}
#endif
