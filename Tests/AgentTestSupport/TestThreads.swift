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
/// At most `width` bodies run at once (``TestBodySlots``; the rest wait in order, holding no
/// thread), so the machine is not loaded with every test of the target at the same moment. The
/// threads themselves are not so bounded: a body that awaits (a yield, a child task, a store's
/// answer) gets a thread for its next step at once. When the threads were the bound, the next
/// step of an awaiting test queued behind every body not yet begun, and behind 12 bodies
/// blocked on their agents it waited for minutes: at load 50 a test of 1,000 awaits ran 906 s
/// and the watchdog ended the run. A `timeLimit` trait would count a test's wait for its slot
/// too: on a loaded machine 31 quick tests' 3-minute limits lapsed while they waited (none had
/// begun). So these suites carry no time limit; ``TestWatchdog`` ends a hung test's run,
/// counting from when its body got its slot.
package final class TestThreads: TaskExecutor, @unchecked Sendable {
    /// Threads for the bodies ``TestBodySlots`` lets run and for their next steps: far more
    /// than those bodies (each may block one), made only as jobs wait.
    package static let shared = TestThreads(width: 256)

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
        // A body is a test case (a test that is not parameterized has one): the test's own scope
        // only awaits its cases. Holding a slot it would keep one from them, and watched it
        // counted every case's wait (at load 50 it ended a run at 906 s while its longest case
        // had run 599 s).
        let body = testCase != nil
        if body { await TestBodySlots.shared.take() }
        defer { if body { TestBodySlots.shared.give() } }
        try await withTaskExecutorPreference(TestThreads.shared) {
            // Watched from when the body has its slot, not while it waits for one.
            let token = body ? TestWatchdog.begin(name) : nil
            let start = TestTimeline.now()
            defer {
                token.map(TestWatchdog.end)
                if body { TestTimeline.record(test.id.description, since: start) }
            }
            try await function()
        }
    }
}

extension SuiteTrait where Self == OwnThreadsTrait {
    /// The suite's tests run on threads of their own, not the cooperative pool.
    package static var ownThreads: Self { OwnThreadsTrait() }
}

/// At most `AGENT_TEST_THREADS` (default 12) test bodies of the `.ownThreads` suites at once;
/// the others wait for a slot in the order they asked, holding no thread.
package final class TestBodySlots: @unchecked Sendable {
    package static let shared = TestBodySlots(width: ProcessInfo.processInfo.environment["AGENT_TEST_THREADS"].flatMap(Int.init).map { max($0, 1) } ?? 12)

    private let lock = NSLock()
    private var free: Int
    private var waiting: [CheckedContinuation<Void, Never>] = []

    package init(width: Int) { free = width }

    /// Returns once a slot is this caller's.
    package func take() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            lock.lock()
            if free > 0 {
                free -= 1
                lock.unlock()
                continuation.resume()
            } else {
                waiting.append(continuation)
                lock.unlock()
            }
        }
    }

    /// Gives a slot back: to the longest waiting, if any.
    package func give() {
        lock.lock()
        guard !waiting.isEmpty else {
            free += 1
            lock.unlock()
            return
        }
        let next = waiting.removeFirst()
        lock.unlock()
        next.resume()
    }
}
