import Foundation

/// procrastinate (a PostgreSQL task queue), installed from PyPI at run time into a virtual
/// environment in the scratch folder (nothing of it is in the repository), and the Python
/// driver that measures it (``script``): the baseline of figure 13, on the bench's own
/// PostgreSQL server in the same run.
struct ProcrastinateDriver {
    /// The version the issue's reference figures were taken with.
    static let requirements = ["procrastinate==3.10.0"]

    let folder: String
    var python: String { folder + "/venv/bin/python" }

    /// What one run of the driver printed.
    struct Output: Decodable {
        struct Throughput: Decodable {
            var jobs: Int
            var completed: Int
            var seconds: Double
        }
        var version: String
        var errors: [String]
        var throughput: Throughput?
        /// deferred (the driver's clock right before the defer) → started (the job's
        /// `started` event, the server's clock in the fetching transaction), in ns.
        var latency_ns: [Int64]?
    }

    init(environment: BenchEnvironment) throws {
        folder = environment.folder("procrastinate")
        _ = try PythonVirtualEnvironment.install(Self.requirements, in: folder)
        try Self.script.write(toFile: folder + "/procrastinate_bench.py", atomically: true, encoding: .utf8)
    }

    /// One run against the empty database `dsn`: `workers` worker processes with
    /// `concurrency` each, a burst of `burst` jobs, then `latencyJobs` one at a time.
    func run(dsn: String, workers: Int, concurrency: Int, poll: Double, burst: Int, latencyJobs: Int, warmup: Int) throws -> Output {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: python)
        process.arguments = [folder + "/procrastinate_bench.py", String(workers), String(concurrency), String(poll), String(burst),
                             String(latencyJobs), String(warmup)]
        process.currentDirectoryURL = URL(fileURLWithPath: folder)
        process.environment = ProcessInfo.processInfo.environment.merging([
            "BENCH_PG_DSN": dsn, "BENCH_WORKER_LOG": "\(folder)/worker-\(workers).log", "PYTHONPATH": folder,
        ]) { _, new in new }
        let errorLog = "\(folder)/driver-\(workers).log"
        let data = try DriverProcess.output(of: process, errorLog: errorLog, name: "procrastinate")
        guard let line = String(decoding: data, as: UTF8.self).split(separator: "\n").last,
              let parsed = try? JSONDecoder().decode(Output.self, from: Data(line.utf8)) else {
            throw BenchError("the procrastinate driver printed no result; see \(errorLog)")
        }
        return parsed
    }

    /// The driver, written into the scratch folder at run time.
    static let script = #"""
"""agent-bench's driver for procrastinate (figure 13), written into the scratch folder at run
time. One run on an empty database: apply procrastinate's schema, start WORKERS worker
processes (`procrastinate worker --concurrency C`), warm them up, then
(1) defer a burst of N no-op jobs in one batch (one transaction) and wait until all succeeded:
    completed jobs/s = N / (the last `succeeded` event's time - the time right before the defer);
(2) defer jobs one at a time, each after the previous succeeded: deferred -> started = the
    job's `started` event (server clock) - the driver's clock right before the defer.
Prints one JSON line on stdout.
"""
import asyncio
import json
import os
import signal
import subprocess
import sys
import time

import procrastinate
import psycopg
from procrastinate import App, PsycopgConnector

DSN = os.environ["BENCH_PG_DSN"]
app = App(connector=PsycopgConnector(conninfo=DSN))


@app.task(name="noop", queue="bench")
async def noop(sent_ns=0):
    return None


async def succeeded(conn, after_id):
    cur = await conn.execute("SELECT count(*) FROM procrastinate_jobs WHERE id > %s AND status = 'succeeded'", (after_id,))
    return (await cur.fetchone())[0]


async def wait_succeeded(conn, after_id, count, timeout, step=0.005):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if await succeeded(conn, after_id) >= count:
            return
        await asyncio.sleep(step)
    raise RuntimeError("%d jobs did not all succeed within %d s" % (count, timeout))


async def main():
    workers, concurrency, poll = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
    burst, latency_jobs, warmup = int(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6])
    result = {"version": "procrastinate %s, psycopg %s" % (procrastinate.__version__, psycopg.__version__), "errors": []}
    log = open(os.environ.get("BENCH_WORKER_LOG", os.devnull), "ab")
    procs = []
    async with app.open_async():
        await app.schema_manager.apply_schema_async()
        conn = await psycopg.AsyncConnection.connect(DSN, autocommit=True)
        try:
            for _ in range(workers):
                procs.append(subprocess.Popen(
                    [sys.executable, "-m", "procrastinate", "--app=procrastinate_bench.app", "worker", "--queues=bench",
                     "--concurrency=%d" % concurrency, "--fetch-job-polling-interval=%g" % poll],
                    stdout=log, stderr=log, start_new_session=True, cwd=os.path.dirname(os.path.abspath(__file__))))
            await noop.batch_defer_async(*[{"sent_ns": 0} for _ in range(warmup)])
            await wait_succeeded(conn, 0, warmup, 120)
            cur = await conn.execute("SELECT coalesce(max(id), 0) FROM procrastinate_jobs")
            last = (await cur.fetchone())[0]

            first = time.time_ns()
            await noop.batch_defer_async(*[{"sent_ns": 0} for _ in range(burst)])
            await wait_succeeded(conn, last, burst, 600, step=0.02)
            cur = await conn.execute(
                "SELECT extract(epoch from max(e.at))::float8, count(DISTINCT j.id) FROM procrastinate_jobs j "
                "JOIN procrastinate_events e ON e.job_id = j.id AND e.type = 'succeeded' WHERE j.id > %s", (last,))
            end, completed = await cur.fetchone()
            result["throughput"] = {"jobs": burst, "completed": completed, "seconds": end - first / 1e9}

            ids, sent = [], {}
            for _ in range(latency_jobs):
                stamp = time.time_ns()
                job = await noop.defer_async(sent_ns=stamp)
                sent[job] = stamp
                ids.append(job)
                deadline = time.monotonic() + 60
                while True:
                    cur = await conn.execute("SELECT status FROM procrastinate_jobs WHERE id = %s", (job,))
                    if (await cur.fetchone())[0] == "succeeded":
                        break
                    if time.monotonic() > deadline:
                        raise RuntimeError("job %d did not succeed within 60 s" % job)
                    await asyncio.sleep(0.001)
            cur = await conn.execute(
                "SELECT job_id, (extract(epoch from at) * 1e9)::bigint FROM procrastinate_events "
                "WHERE type = 'started' AND job_id = ANY(%s)", (ids,))
            result["latency_ns"] = [started - sent[job] for job, started in await cur.fetchall()]
        except Exception as error:  # reported, not raised: the bench prints it as a failure
            result["errors"].append("%s: %s" % (type(error).__name__, error))
        finally:
            for proc in procs:
                if proc.poll() is None:
                    os.killpg(proc.pid, signal.SIGTERM)
            for proc in procs:
                try:
                    proc.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    os.killpg(proc.pid, signal.SIGKILL)
                    proc.wait()
            await conn.close()
    print(json.dumps(result))


if __name__ == "__main__":
    asyncio.run(main())
"""#
}
