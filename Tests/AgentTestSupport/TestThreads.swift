import Foundation
import Testing

/// Threads of their own for the tests' bodies, so that a test that blocks its thread never
/// blocks the process's cooperative pool.
///
/// Many tests wait synchronously (`Thread.sleep`, `waitpid`, an agent's exit, a program's
/// output). On the cooperative pool — as wide as the machine has cores, two on CI — two such
/// tests at once stopped every task of the test process, including the PostgreSQL clients'
/// and the continuations of SwiftNIO's futures, for as long as they waited: under load a test
/// that only awaited saw minutes go by between two of its steps. Each suite of this target
/// carries ``ownThreads`` (`@Suite(.ownThreads)`): its tests run with this executor as their
/// task executor preference, so their blocking takes one of these threads, and the tasks
/// they start unstructured (the stores', the clients') keep the pool.
///
/// At most `width` bodies run at once (the rest wait in order), so the machine is not loaded
/// with every test of the target at the same moment. A `timeLimit` trait would count a test's
/// wait for a thread too: on a loaded machine tests that block for minutes held every thread
/// and 31 quick tests' 3-minute limits lapsed while they waited (none had begun). So these
/// suites carry no time limit; ``TestWatchdog`` ends a hung test's run, counting from when its
/// body got a thread.
package final class TestThreads: TaskExecutor, @unchecked Sendable {
    /// `AGENT_TEST_THREADS` bodies at once (default 12), to measure another width.
    package static let shared = TestThreads(width: ProcessInfo.processInfo.environment["AGENT_TEST_THREADS"].flatMap(Int.init).map { max($0, 1) } ?? 12)

    private let width: Int
    private let condition = NSCondition()
    private var jobs: [UnownedJob] = []
    private var head = 0
    private var idle = 0
    private var threads = 0

    package init(width: Int) { self.width = width }

    package func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.lock()
        jobs.append(job)
        // Every queued job has a thread waiting for it, or gets one (up to the width).
        let spawn = jobs.count - head > idle && threads < width
        if spawn { threads += 1 } else { condition.signal() }
        condition.unlock()
        if spawn {
            let thread = Thread { [self] in work() }
            thread.name = "test body"
            thread.stackSize = 8 << 20
            thread.start()
        }
    }

    private func work() {
        while true {
            condition.lock()
            while head == jobs.count {
                idle += 1
                condition.wait()
                idle -= 1
            }
            let job = jobs[head]
            head += 1
            if head > 256, head * 2 > jobs.count {
                jobs.removeFirst(head)
                head = 0
            }
            condition.unlock()
            job.runSynchronously(on: asUnownedTaskExecutor())
        }
    }
}

/// Runs each test of a suite on ``TestThreads`` (see there why), watched by ``TestWatchdog``.
package struct OwnThreadsTrait: SuiteTrait, TestTrait, TestScoping {
    package var isRecursive: Bool { true }

    package func scopeProvider(for test: Test, testCase: Test.Case?) -> Self? {
        // The tests and their cases, not the suite around them (its scope would hold a
        // thread for as long as the suite runs).
        test.isSuite ? nil : self
    }

    package func provideScope(for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void) async throws {
        let name = test.id.description + (testCase.map { _ in " (a case)" } ?? "")
        try await withTaskExecutorPreference(TestThreads.shared) {
            // Watched from when the body has its thread, not while it waits for one.
            let token = TestWatchdog.begin(name)
            defer { TestWatchdog.end(token) }
            try await function()
        }
    }
}

extension SuiteTrait where Self == OwnThreadsTrait {
    /// The suite's tests run on threads of their own, not the cooperative pool.
    package static var ownThreads: Self { OwnThreadsTrait() }
}
