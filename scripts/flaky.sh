#!/usr/bin/env bash
# Runs the whole test suite N times (default 10) beside CPU hogs (default 2 `yes >/dev/null`,
# one per core of this project's machines) and prints, for each test that failed in any run,
# how many runs it failed in and the first lines of its failures. Builds once, then runs
# `swift test --skip-build`. Exits 1 when any run failed, 0 when every run passed. --filter
# takes a suite, a test or a whole test target (AgentWorkTests, EndToEndTests, …).
#
#   scripts/flaky.sh [N] [--hogs K] [--filter REGEX] [--logs DIR]
set -euo pipefail

usage() {
    sed -n '2,8p' "$0" | sed 's/^# \{0,1\}//'
}

runs=10
hogs=2
filter=""
logs=""
while [ $# -gt 0 ]; do
    case "$1" in
        --hogs) hogs="$2"; shift 2 ;;
        --filter) filter="$2"; shift 2 ;;
        --logs) logs="$2"; shift 2 ;;
        -h|--help) usage; exit 0 ;;
        [0-9]*) runs="$1"; shift ;;
        *) echo "error: unknown argument $1" >&2; usage >&2; exit 64 ;;
    esac
done
case "$runs" in ''|*[!0-9]*|0) echo "error: N must be a positive number of runs, not \"$runs\"" >&2; exit 64 ;; esac
case "$hogs" in ''|*[!0-9]*) echo "error: --hogs must be a number, not \"$hogs\"" >&2; exit 64 ;; esac

cd "$(dirname "$0")/.."
export PATH="/opt/swift/usr/bin:$PATH"
logs="${logs:-$(mktemp -d /tmp/flaky.XXXXXX)}"
mkdir -p "$logs"

swift build --build-tests >"$logs/build.log" 2>&1 || { echo "error: the build failed; see $logs/build.log" >&2; exit 1; }

hog_pids=()
stop_hogs() { for pid in "${hog_pids[@]}"; do kill "$pid" 2>/dev/null || true; done; }
trap stop_hogs EXIT
for _ in $(seq 1 "$hogs"); do yes >/dev/null & hog_pids+=($!); done

# CPU-seconds of this shell's ended children (/proc: cutime + cstime): a run's own work, which
# the hogs beside it do not inflate as they do its wall time.
children_cpu() {
    local stat
    read -r stat </proc/$$/stat
    set -- ${stat##*) }
    echo $(( ${14} + ${15} ))
}
ticks="$(getconf CLK_TCK)"
stamp() {
    python3 -u -c 'import sys, time
start = time.monotonic()
for line in sys.stdin:
    sys.stdout.write("%8.2f %s" % (time.monotonic() - start, line))'
}
failed_runs=0
for run in $(seq 1 "$runs"); do
    log="$logs/run-$run.log"
    start=$(date +%s)
    cpu=$(children_cpu)
    # Each line of the log begins with the seconds since the run began: what ran when, and
    # what held the run up (pipefail: the run's status is swift test's).
    if swift test --skip-build ${filter:+--filter "$filter"} 2>&1 | stamp >"$log"; then status=passed; else status=FAILED; failed_runs=$((failed_runs + 1)); fi
    echo "run $run/$runs: $status in $(( $(date +%s) - start )) s, $(( ($(children_cpu) - cpu) / ticks )) CPU-s ($log)"
done
stop_hogs

# Failed tests: XCTest's "Test Case '-[...]' failed" / "error: ... : failed", Swift Testing's
# "✘ Test name() ... failed" and "✘ Test name() recorded an issue at FILE:LINE: message".
python3 - "$logs" "$runs" <<'PY'
import collections, glob, os, re, sys
logs, runs = sys.argv[1], int(sys.argv[2])
failed_in = collections.defaultdict(set)
details = collections.defaultdict(list)
pattern = re.compile(r"✘ Test (.+?) (?:recorded an issue(?: with \d+ arguments?.*?)?(?: at (\S+))?: (.*)|(?:with \d+ test cases? )?failed)")
xctest = re.compile(r"Test Case '(.+?)' failed")
for path in sorted(glob.glob(os.path.join(logs, "run-*.log"))):
    run = os.path.basename(path)
    for line in open(path, errors="replace"):
        m = pattern.search(line)
        if m and not m.group(1).startswith("run with"):
            name = m.group(1)
            failed_in[name].add(run)
            if m.group(3) and len(details[name]) < 3:
                details[name].append(f"{run}: {m.group(2) or ''} {m.group(3)}".strip())
            continue
        if m:
            continue
        m = xctest.search(line)
        if m:
            failed_in[m.group(1)].add(run)
if not failed_in:
    print(f"no test failed in {runs} run(s)")
for name, where in sorted(failed_in.items(), key=lambda item: -len(item[1])):
    print(f"{name}: failed in {len(where)} of {runs} run(s)")
    for detail in details[name]:
        print(f"    {detail}")
PY
echo "logs: $logs"
[ "$failed_runs" = 0 ]
