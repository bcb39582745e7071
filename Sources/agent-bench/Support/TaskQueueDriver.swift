import Foundation

/// Celery and RQ, installed from PyPI at run time into a virtual environment in the scratch
/// folder (nothing of them is in the repository; pip's cache keeps the wheels for the next
/// run), and the Python driver that measures them (``script``, written next to it): the
/// baselines of figure 10.
struct TaskQueueDriver {
    /// The versions the issue's reference figures were taken with.
    static let requirements = ["celery[redis]==5.7.0", "rq==3.0.0"]

    /// One configuration of a run: which system, and how many tasks in each phase.
    struct Load {
        /// "celery", "rq-simple" (RQ's SimpleWorker) or "rq-fork" (RQ's default Worker, a fork per job).
        var system: String
        /// Tasks run one at a time for enqueue → start.
        var latencyTasks: Int
        /// Tasks of the burst for completed tasks/s.
        var burst: Int
        /// Tasks run before either phase.
        var warmup: Int
    }

    let folder: String
    var python: String { folder + "/venv/bin/python" }

    /// Creates the virtual environment and installs the requirements (skipped when already
    /// there), then writes the driver.
    init(environment: BenchEnvironment) throws {
        folder = environment.folder("taskqueues")
        _ = try PythonVirtualEnvironment.install(Self.requirements, in: folder)
        try Self.script.write(toFile: folder + "/taskqueue_bench.py", atomically: true, encoding: .utf8)
    }

    /// Runs the driver for one system against the broker at `redisURL` and reads its output.
    func run(_ load: Load, redisURL: String) throws -> TaskQueueOutput {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: python)
        process.arguments = [folder + "/taskqueue_bench.py", load.system, String(load.latencyTasks), String(load.burst), String(load.warmup)]
        process.currentDirectoryURL = URL(fileURLWithPath: folder)
        process.environment = ProcessInfo.processInfo.environment.merging([
            "BENCH_REDIS_URL": redisURL,
            "BENCH_WORKER_LOG": "\(folder)/\(load.system)-worker.log",
            "PYTHONPATH": folder,
            // Celery warns at every start that it runs as root; the bench may run as root.
            "C_FORCE_ROOT": "1",
        ]) { _, new in new }
        let data = try DriverProcess.output(of: process, errorLog: "\(folder)/\(load.system)-driver.log", name: load.system)
        let text = String(decoding: data, as: UTF8.self)
        return try TaskQueueOutput(parsing: text)
    }

    /// The driver, written into the scratch folder at run time.
    static let script = #"""
"""agent-bench's driver for the task queue baselines (figure 10), written into the scratch
folder at run time. One run: start a worker, warm it up, measure enqueue -> task start one
task at a time, then completed tasks/s for a burst; print one JSON line on stdout.

The enqueue time is taken with time.time_ns() (CLOCK_REALTIME) right before the enqueue call
and carried in the task's argument; the start time with the same clock first thing in the
task's body. Completion is observed: in the latency phase each task pushes its stamps to a
Redis list after it took them (the driver waits for it before the next enqueue), in the
throughput phase only a last sentinel task does (one worker, one queue: it runs last).
"""
import json
import os
import signal
import subprocess
import sys
import time

import redis

URL = os.environ["BENCH_REDIS_URL"]
QUEUE = "agentbench"
_client = None
_counter = 0


def _redis():
    global _client
    if _client is None:
        _client = redis.Redis.from_url(URL)
    return _client


def noop(enqueued_ns, report=None):
    """The no-op task: stamps its start; reports only when asked (latency phase, sentinel)."""
    global _counter
    started = time.time_ns()
    _counter += 1
    if report:
        _redis().rpush(report, "%d %d %d %d" % (enqueued_ns, started, _counter, os.getpid()))
    return None


try:
    from celery import Celery

    app = Celery("agentbench", broker=URL)
    app.conf.update(task_ignore_result=True, task_default_queue=QUEUE, broker_connection_retry_on_startup=True)
    celery_noop = app.task(name="agentbench.noop")(noop)
except ImportError:
    app = None


class System:
    def __init__(self, kind):
        self.kind = kind
        self.r = redis.Redis.from_url(URL)
        if kind == "celery":
            import celery

            self.version = "celery %s, redis-py %s" % (celery.__version__, redis.__version__)
            self.worker_args = [sys.executable, "-m", "celery", "-A", "taskqueue_bench", "worker", "-P", "solo", "-c", "1",
                                "-Q", QUEUE, "-l", "warning", "--without-gossip", "--without-mingle", "--without-heartbeat"]
        else:
            import rq
            from rq import Queue

            self.version = "rq %s, redis-py %s" % (rq.__version__, redis.__version__)
            self.queue = Queue(QUEUE, connection=self.r)
            worker = "rq.worker.SimpleWorker" if kind == "rq-simple" else "rq.worker.Worker"
            self.worker_args = [sys.executable, "-m", "rq.cli", "worker", "--url", URL, "-w", worker, "-q", QUEUE]
            self.job_ids = []

    def enqueue(self, report=None):
        enqueued = time.time_ns()
        if self.kind == "celery":
            celery_noop.apply_async((enqueued, report))
        else:
            job = self.queue.enqueue("taskqueue_bench.noop", enqueued, report)
            self.job_ids.append(job.id)

    def unfinished(self, ids):
        """Jobs among `ids` that did not finish (RQ keeps each job's status in Redis)."""
        from rq.job import Job, JobStatus

        jobs = Job.fetch_many(ids, connection=self.r)
        return sum(1 for job in jobs if job is None or job.get_status() != JobStatus.FINISHED)


def wait_report(r, key, timeout):
    # In steps shorter than redis-py's socket timeout (5 s by default in redis 8).
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        got = r.blpop([key], timeout=1)
        if got is not None:
            return [int(x) for x in got[1].split()]
    raise RuntimeError("no task reported within %d s" % timeout)


def main():
    kind, latency_runs, burst, warmup = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    system = System(kind)
    system.r.flushdb()
    key = "agentbench:report"
    log = open(os.environ.get("BENCH_WORKER_LOG", os.devnull), "ab")
    worker = subprocess.Popen(system.worker_args, stdout=log, stderr=log, start_new_session=True, cwd=os.path.dirname(os.path.abspath(__file__)))
    result = {"system": kind, "version": system.version, "errors": []}
    try:
        # Warm-up: the worker connects and imports; the first tasks pay for it.
        for _ in range(warmup):
            system.enqueue()
        system.enqueue(key)
        wait_report(system.r, key, 120)

        latencies = []
        for _ in range(latency_runs):
            system.enqueue(key)
            enqueued, started, _, _ = wait_report(system.r, key, 60)
            latencies.append(started - enqueued)
        result["latency_ns"] = latencies

        before = None
        if kind == "celery":
            system.enqueue(key)
            before = wait_report(system.r, key, 60)[2]
        if kind != "celery":
            system.job_ids = []
        first = time.time_ns()
        for _ in range(burst):
            system.enqueue()
        enqueued_all = time.time_ns()
        system.enqueue(key)
        _, _, counter, _ = wait_report(system.r, key, 600)
        done = time.time_ns()
        # The sentinel ran after every task of the burst; check they all completed.
        if kind == "celery":
            completed = counter - before - 1
        else:
            ids = system.job_ids[:-1]
            completed = len(ids) - system.unfinished(ids)
        result["throughput"] = {"tasks": burst, "completed": completed, "seconds": (done - first) / 1e9,
                                "enqueue_seconds": (enqueued_all - first) / 1e9}
    except Exception as error:  # reported, not raised: the bench prints it as a failure
        result["errors"].append("%s: %s" % (type(error).__name__, error))
    finally:
        if worker.poll() is None:
            os.killpg(worker.pid, signal.SIGTERM)
            try:
                worker.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(worker.pid, signal.SIGKILL)
                worker.wait()
        else:
            result["errors"].append("the worker exited early with status %d" % worker.returncode)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
"""#
}
