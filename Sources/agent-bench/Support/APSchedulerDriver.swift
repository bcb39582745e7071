import Foundation

/// APScheduler, installed from PyPI at run time into a virtual environment in the scratch
/// folder (nothing of it is in the repository; pip's cache keeps the wheel for the next run),
/// and the Python driver that measures it (``script``, written next to it): the baseline of
/// figure 11.
struct APSchedulerDriver {
    /// The version the issue's reference figures were taken with (3.11).
    static let requirement = "APScheduler==3.11.3"

    /// What one run of the driver found.
    struct Output: Decodable {
        var version: String
        var errors: [String]
        var lateness_ns: [Int64]?
        var expected: Int?
        var fired: Int?
        var missed: Int?
        var doubled: Int?
        var missed_events: Int?
        var max_instances_events: Int?
        var idle_cpu_none: Double?
        var idle_cpu_waiting: Double?
    }

    let folder: String
    var python: String { folder + "/venv/bin/python" }

    /// Creates the virtual environment and installs APScheduler (skipped when already there),
    /// then writes the driver.
    init(environment: BenchEnvironment) throws {
        folder = environment.folder("apscheduler")
        _ = try PythonVirtualEnvironment.install([Self.requirement], in: folder)
        try Self.script.write(toFile: folder + "/apscheduler_bench.py", atomically: true, encoding: .utf8)
    }

    /// Runs the driver: `jobs` jobs every second for `seconds` s, then `idleSeconds` s of idle
    /// CPU without jobs and with `jobs` waiting ones.
    func run(jobs: Int, seconds: Int, idleSeconds: Int) throws -> Output {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: python)
        process.arguments = [folder + "/apscheduler_bench.py", String(jobs), String(seconds), String(idleSeconds)]
        process.currentDirectoryURL = URL(fileURLWithPath: folder)
        let data = try DriverProcess.output(of: process, errorLog: folder + "/driver.log", name: "APScheduler")
        do {
            return try JSONDecoder().decode(Output.self, from: data)
        } catch {
            throw BenchError("the APScheduler driver printed no result (\(error)): \(String(decoding: data.prefix(500), as: UTF8.self))")
        }
    }

    /// The driver, written into the scratch folder at run time.
    static let script = #"""
"""agent-bench's driver for the APScheduler baseline (figure 11), written into the scratch
folder at run time. One run, printing one JSON line on stdout:

1. Lateness: a BackgroundScheduler with its defaults (a ThreadPoolExecutor of 10 threads,
   misfire_grace_time 1 s, coalesce off) and N jobs, each an IntervalTrigger of 1 s starting at
   the same whole second T0 (2 s ahead), so that the planned instants are T0 + k s. Each call
   takes its start first thing (time.time_ns(), CLOCK_REALTIME); lateness = start - planned,
   with planned = the latest T0 + k s at or before the start (APScheduler runs due jobs only,
   and lateness stays far below a second). Fires whose planned instant is in [T0, T0 + D)
   count; missed = N * D - the distinct (job, planned) pairs seen; doubled = pairs seen twice;
   APScheduler's own missed and max-instances events are counted too.
2. Idle CPU: the process's CPU time (time.process_time(), all threads) over W seconds with a
   fresh scheduler holding no job, then N cron jobs that do not fire in the window
   (0 3 1 1 *), in % of one core.
"""
import json
import sys
import threading
import time
from datetime import datetime, timezone

import apscheduler
from apscheduler.events import EVENT_JOB_MAX_INSTANCES, EVENT_JOB_MISSED
from apscheduler.schedulers.background import BackgroundScheduler
from apscheduler.triggers.cron import CronTrigger
from apscheduler.triggers.interval import IntervalTrigger

SECOND = 1_000_000_000


def lateness(jobs, duration):
    starts = []
    lock = threading.Lock()

    def job(index):
        started = time.time_ns()
        with lock:
            starts.append((index, started))

    events = {"missed": 0, "max_instances": 0}

    def listener(event):
        if event.code == EVENT_JOB_MISSED:
            events["missed"] += 1
        else:
            events["max_instances"] += 1

    scheduler = BackgroundScheduler()
    scheduler.add_listener(listener, EVENT_JOB_MISSED | EVENT_JOB_MAX_INSTANCES)
    t0 = (time.time_ns() // SECOND + 2) * SECOND
    start_date = datetime.fromtimestamp(t0 // SECOND, tz=timezone.utc)
    for index in range(jobs):
        scheduler.add_job(job, IntervalTrigger(seconds=1, start_date=start_date), args=(index,), id="job%03d" % index)
    scheduler.start()
    end = t0 + duration * SECOND
    # Let the calls of the last planned instant start, then stop (waiting for running calls).
    time.sleep(max(0, (end - time.time_ns()) / 1e9) + 0.5)
    scheduler.shutdown(wait=True)

    seen = {}
    late = []
    for index, started in starts:
        planned = t0 + (started - t0) // SECOND * SECOND
        if planned < t0 or planned >= end:
            continue
        key = (index, planned)
        seen[key] = seen.get(key, 0) + 1
        late.append(started - planned)
    expected = jobs * duration
    return {
        "lateness_ns": late,
        "expected": expected,
        "fired": len(seen),
        "missed": expected - len(seen),
        "doubled": sum(1 for count in seen.values() if count > 1),
        "missed_events": events["missed"],
        "max_instances_events": events["max_instances"],
    }


def idle_cpu(jobs, seconds):
    scheduler = BackgroundScheduler()
    scheduler.start()
    for index in range(jobs):
        scheduler.add_job(lambda: None, CronTrigger.from_crontab("0 3 1 1 *"), id="idle%03d" % index)
    time.sleep(1)  # settle
    cpu, wall = time.process_time(), time.monotonic()
    time.sleep(seconds)
    used = (time.process_time() - cpu) / (time.monotonic() - wall) * 100
    scheduler.shutdown(wait=True)
    return used


def main():
    jobs, duration, idle_seconds = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
    result = {"version": "APScheduler %s, Python %s" % (apscheduler.__version__, sys.version.split()[0]), "errors": []}
    try:
        result.update(lateness(jobs, duration))
        result["idle_cpu_none"] = idle_cpu(0, idle_seconds)
        result["idle_cpu_waiting"] = idle_cpu(jobs, idle_seconds)
    except Exception as error:  # reported, not raised: the bench prints it as a failure
        result["errors"].append("%s: %s" % (type(error).__name__, error))
    print(json.dumps(result))


if __name__ == "__main__":
    main()
"""#
}
