#!/usr/bin/env python3
"""Issue 34: the supervisor loop's longest stall while pathological patterns are matched.

Starts `agent-control console` in a scratch agent whose task `t` has an input schema with
`(x+x+)+y` and `^(a+)+$`. One thread sends {"command":"status"} on the control socket back to
back; the main thread sends task_run requests whose input meets those patterns (120 x; 5,000 a
and a b), or, with --benign, a one-letter input (the baseline: the same requests, no matching
cost). The longest status round trip while they run bounds the loop's longest stall.

Usage: benchmarks/pattern-stall.py .build/release/agent-control [--requests N] [--benign]
"""
import argparse, json, os, shutil, socket, subprocess, tempfile, threading, time

SETTINGS = {"enabled_modules": [], "processes": {}, "tasks": {"t": {"type": "command", "command": ["/bin/true"], "input": {
    "properties": {"s": {"type": "string", "pattern": "(x+x+)+y"}, "a": {"type": "string", "pattern": "^(a+)+$"}}}}}}

def ask(path, request):
    """One request per connection, as the control server answers."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.connect(path)
        s.sendall((json.dumps(request) + "\n").encode())
        return json.loads(s.makefile("rb").readline())

def round_trips(path, out, count=None, stop=None):
    while (count is not None and len(out) < count) or (stop is not None and not stop.is_set()):
        started = time.monotonic()
        ask(path, {"command": "status"})
        out.append(time.monotonic() - started)

def summary(values):
    ordered = sorted(values)
    return "%d round trips, median %.2f ms, p99 %.2f ms, max %.2f ms" % (
        len(ordered), ordered[len(ordered) // 2] * 1e3, ordered[min(len(ordered) - 1, int(.99 * len(ordered)))] * 1e3, ordered[-1] * 1e3)

def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("agent_control")
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--benign", action="store_true")
    args = parser.parse_args()
    folder = tempfile.mkdtemp(prefix="pattern-stall.")
    with open(folder + "/settings.json", "w") as f:
        json.dump(SETTINGS, f)
    console = subprocess.Popen([os.path.abspath(args.agent_control), "console"], cwd=folder, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    path = folder + "/.agent/run/control.sock"
    try:
        for _ in range(200):
            if os.path.exists(path) or console.poll() is not None:
                break
            time.sleep(0.05)
        if not os.path.exists(path):
            raise SystemExit("agent-control console did not start; try it in %s (e.g. set AGENT_WORKER_PATH)" % folder)
        time.sleep(0.5)
        quiet, busy, stop = [], [], threading.Event()
        round_trips(path, quiet, count=300)
        pinger = threading.Thread(target=round_trips, args=(path, busy), kwargs={"stop": stop})
        pinger.start()
        started, refused = time.monotonic(), 0
        for i in range(args.requests):
            value = {"s": "x"} if args.benign else {"s": "x" * 120} if i % 2 == 0 else {"a": "a" * 5000 + "b"}
            refused += not ask(path, {"command": "task_run", "name": "t", "input": value}).get("ok")
        elapsed = time.monotonic() - started
        stop.set()
        pinger.join()
        print("status alone: " + summary(quiet))
        print("status during %d %s task_run requests (%.2f s, %d refused by the input schema): %s" % (
            args.requests, "benign" if args.benign else "pathological", elapsed, refused, summary(busy)))
    finally:
        console.terminate()
        console.wait(timeout=30)
        shutil.rmtree(folder, ignore_errors=True)

main()
