@testable import AgentCore
import AgentTestSupport
import Foundation
import Synchronization
import Testing

/// A worker's threads say when the system refuses one: the worker leaves (exit status 1) saying
/// why, not runs on without its reader, writer or process thread.
@Suite(.ownThreads) struct WorkerThreadTests {
    @Test func aThreadRunsItsBodyUnderItsName() async throws {
        let seen = Mutex<String?>(nil)
        WorkerThread.start("wt-named") {
            let name = (try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? "unreadable"
            seen.withLock { $0 = name.trimmingCharacters(in: .newlines) }
        }
        let deadline = Date().addingTimeInterval(60)
        while seen.withLock({ $0 }) == nil, Date() < deadline { try await Task.sleep(for: .milliseconds(10)) }
        #expect(seen.withLock { $0 } == "wt-named")
    }

    @Test func aThreadTheSystemRefusesEndsTheWorkerSayingWhy() async throws {
        // A stack no address space holds: pthread_create refuses it, as it does past `ulimit -u`.
        let result = try await #require(processExitsWith: .exitCode(1), observing: [\.standardErrorContent]) {
            WorkerThread.start("wt-refused", stackSize: 1 << 50) {}
            usleep(30_000_000)
        }
        let said = String(decoding: result.standardErrorContent, as: UTF8.self)
        #expect(said.contains("cannot start its wt-refused thread") && said.contains("ulimit -u"), "\(said)")
    }
}
