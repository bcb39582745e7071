#!/usr/bin/env bash
# Builds the libFuzzer harnesses in Fuzz/ (with -sanitize=fuzzer,address) and runs each for
# SECONDS (default 10) from its seed corpus in Fuzz/Corpus/<harness>, FUZZ_JOBS of them at a time
# (default 2, one per core of CI's machine: 11 harnesses of 10 s take 60 s). Prints, per harness, the
# executions, executions per second, coverage (libFuzzer's cov and ft) and crashes; exits
# non-zero when any harness crashed, leaked, timed out or ran out of memory (the input that did
# it is kept under the work folder, and printed), or when a build has no coverage to guide it.
#
#   scripts/fuzz.sh [SECONDS] [HARNESS...]
#   scripts/fuzz.sh --build-only      (builds the harnesses, runs none: .ci/run builds them
#                                      beside its own build and tests, and runs them after)
#   scripts/fuzz.sh --no-build [SECONDS] [HARNESS...]
#                                     (runs the harnesses of the last build without asking
#                                      SwiftPM again: its no-op build took 10 s in .ci/run)
#
# Environment: FUZZ_WORK, the work folder (default a new temporary one, removed after a clean
# run): new corpus entries and crash inputs go there, never into the repository. FUZZ_JOBS, how
# many harnesses run at once. FUZZ_LONG=1, for runs of hours: an optimised build with coverage
# but without ASan (about ten times the executions per second; the Swift code is memory-safe,
# ASan's share is the C targets, which CI's short runs keep checking), in its own build folder
# (with -enable-testing: the harnesses reach internal API through @testable import).
set -euo pipefail

build_only=0
no_build=0
while [ $# -gt 0 ]; do
    case "$1" in
        --build-only) build_only=1; shift ;;
        --no-build) no_build=1; shift ;;
        *) break ;;
    esac
done
if [ "$build_only" = 1 ] && [ "$no_build" = 1 ]; then
    echo "error: --build-only and --no-build exclude each other" >&2
    exit 64
fi
seconds="${1:-10}"
case "$seconds" in
    ''|*[!0-9]*) echo "error: SECONDS must be a whole number, not \"$seconds\" (scripts/fuzz.sh [--no-build] [SECONDS] [HARNESS...])" >&2; exit 64 ;;
esac
shift || true
root="$(cd "$(dirname "$0")/.." && pwd)"
export PATH="/opt/swift/usr/bin:$PATH"
all=(FuzzJSON FuzzSchema FuzzSettings FuzzFrames FuzzRing FuzzControl FuzzHTTP FuzzCommands FuzzCron FuzzWorkflows FuzzReferences)
jobs="${FUZZ_JOBS:-2}"
if [ $# -gt 0 ]; then harnesses=("$@"); else harnesses=("${all[@]}"); fi
work="${FUZZ_WORK:-$(mktemp -d "${TMPDIR:-/tmp}/agent-fuzz.XXXXXX")}"
mkdir -p "$work"

cd "$root/Fuzz"
# swiftc keeps only the last -sanitize= it is given, and `swift build --sanitize=fuzzer
# --sanitize=address` passes two in no fixed order (a build got either coverage or ASan, not
# both): the Swift code gets both in one flag after them. The --sanitize options still matter:
# they give the C targets ASan and let libFuzzer provide main.
# --disable-index-store: no editor reads this build's index, and writing it cost about a
# tenth of the compile time.
flags=(--disable-index-store --sanitize=fuzzer --sanitize=address -Xswiftc -sanitize=fuzzer,address)
if [ "${FUZZ_LONG:-0}" = 1 ]; then
    flags=(--disable-index-store -c release --scratch-path .build-long --sanitize=fuzzer -Xswiftc -sanitize=fuzzer -Xswiftc -enable-testing)
fi
# The order of the two --sanitize flags comes from a Set: with a new hash seed each run, every
# other build saw new flags and rebuilt everything. A fixed seed keeps the order, and the build.
export SWIFT_DETERMINISTIC_HASHING=1
# Where the last build put the harnesses, for --no-build (asking SwiftPM again costs seconds).
bin_record="$root/Fuzz/$( [ "${FUZZ_LONG:-0}" = 1 ] && echo .build-long || echo .build )/agent-fuzz-bin-path"
if [ "$no_build" = 1 ]; then
    bin="$(cat "$bin_record" 2>/dev/null || true)"
    if [ -z "$bin" ] || [ ! -d "$bin" ]; then
        echo "fuzz: --no-build, but no build of the harnesses was found ($bin_record); run scripts/fuzz.sh --build-only first" >&2
        exit 1
    fi
    echo "fuzz: the harnesses of the last build, in $bin (not rebuilt: changes since are not in them)"
else
    echo "fuzz: building the harnesses (swift build ${flags[*]} in Fuzz/)"
    built=$SECONDS
    if ! swift build "${flags[@]}" >"$work/build.log" 2>&1; then
        cat "$work/build.log"
        echo "fuzz: the build failed"
        exit 1
    fi
    bin="$(swift build "${flags[@]}" --show-bin-path)"
    echo "$bin" >"$bin_record"
    echo "fuzz: built in $((SECONDS - built)) s"
fi
if [ "$build_only" = 1 ]; then
    [ -n "${FUZZ_WORK:-}" ] || rm -rf "$work"
    exit 0
fi

# Leaks are checked, except Foundation's own (Fuzz/lsan.supp says which and why).
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:symbolize=1:allocator_may_return_null=1"
export LSAN_OPTIONS="suppressions=$root/Fuzz/lsan.supp:print_suppressions=0"
# libFuzzer prints the stack of a crash; Swift's backtracer, run under ASan after it, once hung.
export SWIFT_BACKTRACE=enable=no

# One harness: libFuzzer for SECONDS, its exit status kept beside its log.
run() {
    local harness="$1" status=0
    mkdir -p "$work/corpus/$harness" "$work/artifacts/$harness"
    # The first folder gets new inputs; the seeds are only read.
    "$bin/$harness" -max_total_time="$seconds" -print_final_stats=1 -timeout=10 -rss_limit_mb=2048 \
        -max_len=4096 -artifact_prefix="$work/artifacts/$harness/" "$work/corpus/$harness" "$root/Fuzz/Corpus/$harness" \
        >"$work/$harness.log" 2>&1 || status=$?
    echo "$status" >"$work/$harness.status"
}

started=$SECONDS
running=0
for harness in "${harnesses[@]}"; do
    if [ "$running" -ge "$jobs" ]; then
        wait -n || true
        running=$((running - 1))
    fi
    run "$harness" &
    running=$((running + 1))
done
wait

failed=0
printf '%-14s %12s %9s %7s %7s %8s  %s\n' harness executions exec/s cov ft crashes result
for harness in "${harnesses[@]}"; do
    artifacts="$work/artifacts/$harness/"
    log="$work/$harness.log"
    status="$(cat "$work/$harness.status" 2>/dev/null || echo 1)"
    execs="$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)"
    rate="$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)"
    line="$(grep -E '^#[0-9]+.*cov: ' "$log" | tail -1 || true)"
    cov="$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$line")"
    ft="$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$line")"
    crashes="$(find "$artifacts" -type f | wc -l)"
    result=ok
    if [ "$status" -ne 0 ] || [ "$crashes" -ne 0 ]; then
        result="FAILED (exit $status)"
        failed=$((failed + 1))
    elif [ "${cov:-0}" -eq 0 ]; then
        # Fuzzing without coverage is a blind random search: the build lost -sanitize=fuzzer.
        result="FAILED (no coverage: the harness is not instrumented)"
        failed=$((failed + 1))
    fi
    printf '%-14s %12s %9s %7s %7s %8s  %s\n' "$harness" "${execs:-?}" "${rate:-?}" "${cov:-?}" "${ft:-?}" "$crashes" "$result"
    if [ "$result" != ok ]; then
        grep -E 'ERROR|==[0-9]+==|Fatal error|panic|SUMMARY|Test unit written|Base64' "$log" | head -20 | sed 's/^/    /'
        find "$artifacts" -type f | sed 's/^/    input: /'
        echo "    log: $log"
    fi
done
echo "fuzz: ran for $((SECONDS - started)) s, $jobs at a time"
if [ "$failed" -eq 0 ] && [ -z "${FUZZ_WORK:-}" ]; then
    rm -rf "$work"
    echo "fuzz: ${#harnesses[@]} harness(es) for ${seconds} s each, none failed"
else
    echo "fuzz: ${#harnesses[@]} harness(es) for ${seconds} s each, $failed failed; work folder $work"
fi
[ "$failed" -eq 0 ]
