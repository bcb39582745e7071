import AgentTestSupport
import Testing

@testable import agent_bench

/// agent-bench reads the last line of its Python driver for the Celery and RQ baselines of
/// figure 10: these are lines the driver printed against celery 5.7.0 and rq 3.0.0 (latencies
/// cut to a few), after a library's warning on stdout, and when a run went wrong.
@Suite(.ownThreads) struct TaskQueueOutputTests {
    static let celery = """
        /tmp/agent-bench.x/taskqueues/venv/lib/python3.11/site-packages/celery/platforms.py:841: SecurityWarning: You're running the worker with superuser privileges
        {"system": "celery", "version": "celery 5.7.0, redis-py 8.1.0", "errors": [], "latency_ns": [931000, 1002345, 880123, 1490000], "throughput": {"tasks": 5000, "completed": 5000, "seconds": 4.625, "enqueue_seconds": 1.2}}
        """

    static let rqWithMissingCompletions = """
        {"system": "rq-simple", "version": "rq 3.0.0, redis-py 8.1.0", "errors": [], "latency_ns": [2500000, 2600000], "throughput": {"tasks": 2000, "completed": 1998, "seconds": 8.9, "enqueue_seconds": 1.1}}
        """

    static let workerDied = """
        {"system": "rq-fork", "version": "rq 3.0.0, redis-py 8.1.0", "errors": ["RuntimeError: no task reported within 120 s", "the worker exited early with status 1"]}
        """

    @Test func aCompleteRunGivesLatenciesInMillisecondsAndCompletedTasksPerSecond() throws {
        let output = try TaskQueueOutput(parsing: Self.celery)
        #expect(output.system == "celery")
        #expect(output.version == "celery 5.7.0, redis-py 8.1.0")
        #expect(output.latencies.values == [0.931, 1.002345, 0.880123, 1.49])
        #expect(output.latencies.median == 0.931)
        let throughput = try #require(output.throughput)
        #expect(throughput == .init(tasks: 5000, completed: 5000, seconds: 4.625, enqueueSeconds: 1.2))
        #expect(throughput.perSecond == 5000 / 4.625)
        #expect(output.problems.isEmpty)
    }

    @Test func aBurstWithTasksNotCompletedIsAProblem() throws {
        let output = try TaskQueueOutput(parsing: Self.rqWithMissingCompletions)
        #expect(output.problems == ["1998 of 2000 tasks of the burst completed"])
        #expect(output.throughput?.perSecond == 1998 / 8.9)
    }

    @Test func theDriversErrorsAreItsProblemsAndNoPhaseIsMissingOnTopOfThem() throws {
        let output = try TaskQueueOutput(parsing: Self.workerDied)
        #expect(output.latencyNanoseconds == nil)
        #expect(output.throughput == nil)
        #expect(output.problems == ["RuntimeError: no task reported within 120 s", "the worker exited early with status 1"])
    }

    @Test func aRunWithoutErrorsThatMeasuredNothingIsAProblem() throws {
        let output = try TaskQueueOutput(parsing: #"{"system": "celery", "version": "celery 5.7.0", "errors": [], "latency_ns": []}"#)
        #expect(output.problems == ["no latency measured", "no throughput measured"])
    }

    @Test func aTaskThatStartedBeforeItWasEnqueuedIsAProblem() throws {
        let text = #"{"system": "celery", "version": "v", "errors": [], "latency_ns": [5, -3], "throughput": {"tasks": 1, "completed": 1, "seconds": 1, "enqueue_seconds": 0}}"#
        #expect(try TaskQueueOutput(parsing: text).problems == ["a task started -3 ns before it was enqueued"])
    }

    @Test func outputWithoutAJSONLineOrWithABrokenOneIsRefusedWithTheOutput() {
        let traceback = "Traceback (most recent call last):\n  File \"taskqueue_bench.py\", line 1\nModuleNotFoundError: No module named 'redis'"
        #expect(throws: TaskQueueOutput.ParseError.self) { try TaskQueueOutput(parsing: traceback) }
        do {
            _ = try TaskQueueOutput(parsing: #"{"system": "celery", "errors": []}"#)
            Issue.record("a line without its version was read")
        } catch {
            #expect(error.description.contains("does not decode"))
            #expect(error.description.contains(#"{"system": "celery", "errors": []}"#))
        }
    }
}
