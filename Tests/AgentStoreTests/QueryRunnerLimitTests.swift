@testable import AgentStore
import AgentTestSupport
import Foundation
import JSONSchema
import Logging
import Synchronization
import Testing

/// A module's query runs on the supervisor's one query thread: an endless recursive query held
/// it (and every later query, the chat's too) until the agent stopped, and one of two million
/// rows took the supervisor past a gigabyte. Each is stopped now, and the thread goes on.
@Suite(.ownThreads) struct QueryRunnerLimitTests {
    /// The answer to `sql`, waited for (a slow machine: up to two minutes).
    static func ask(_ runner: QueryRunner, _ sql: String) throws -> Result<JSONValue, QueryProblem> {
        let answer = Mutex<Result<JSONValue, QueryProblem>?>(nil)
        runner.submit(sql: sql, params: []) { result in answer.withLock { $0 = result } }
        let deadline = Date().addingTimeInterval(120)
        while Date() < deadline {
            if let result = answer.withLock({ $0 }) { return result }
            usleep(10_000)
        }
        throw QueryProblem("no answer to \(sql) within 120 s")
    }

    @Test func anEndlessQueryIsStoppedAtItsDeadlineAndAHugeResultIsRefused() throws {
        let folder = TestPaths.temporaryDirectory("query-limits")
        let store = try AgentStore(path: folder + "/agent.sqlite", settings: StoreSettings(), logger: Logger(label: "test"))
        defer { store.close() }
        let runner = try QueryRunner(storePath: store.path, logger: Logger(label: "test"), longestQuery: 1) { _, _ in }
        defer { runner.stop() }

        let endless = try Self.ask(runner, "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) AS n FROM c")
        guard case .failure(let stopped) = endless else { Issue.record("an endless query answered: \(endless)"); return }
        #expect(stopped.description.contains("ran for more than 1 s and was stopped"), "\(stopped)")

        let huge = try Self.ask(runner, "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c LIMIT 200000) SELECT x, printf('%.100000c', 'a') AS pad FROM c")
        guard case .failure(let refused) = huge else { Issue.record("a 20 GB result was given"); return }
        #expect(refused.description.contains("result is over 4 MiB"), "\(refused)")

        // A value too large is not made at all (it took the supervisor to 1.8 GB before).
        let blob = try Self.ask(runner, "SELECT zeroblob(900000000) AS z")
        guard case .failure(let tooBig) = blob else { Issue.record("a 900 MB value was made"); return }
        #expect(tooBig.description.contains("a value of the query's result is over 4 MiB"), "\(tooBig)")
        // The shared connection's pragmas may be read, not set.
        let set = try Self.ask(runner, "PRAGMA cache_size = -4000000")
        guard case .failure(let refusedPragma) = set else { Issue.record("a pragma was set: \(set)"); return }
        #expect(refusedPragma.description.contains("may read a pragma, not set one"), "\(refusedPragma)")
        #expect((try? Self.ask(runner, "PRAGMA cache_size").get()) != nil)

        // The thread goes on; a query within the bounds is answered whole.
        let small = try Self.ask(runner, "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c LIMIT 1000) SELECT x FROM c")
        #expect((try? small.get())?.arrayValue?.count == 1000, "\(small)")
    }
}
