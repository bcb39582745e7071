#!/usr/bin/env bash
# Builds the libFuzzer harnesses in Fuzz/ (with -sanitize=fuzzer,address) and runs each for
# SECONDS (default 10) from its seed corpus in Fuzz/Corpus/<harness>. Prints, per harness, the
# executions, executions per second, coverage (libFuzzer's cov and ft) and crashes; exits
# non-zero when any harness crashed, leaked a timeout or ran out of memory, with the input that
# did it kept under the work folder (printed).
#
#   scripts/fuzz.sh [SECONDS] [HARNESS...]
#
# Environment: FUZZ_WORK (work folder; default a new temporary one: new corpus entries and
# crash inputs go there, never into the repository), FUZZ_JOBS (harnesses run at once, default 1).
set -euo pipefail

seconds="${1:-10}"
shift || true
root="$(cd "$(dirname "$0")/.." && pwd)"
export PATH="/opt/swift/usr/bin:$PATH"
all=(FuzzJSON FuzzSchema FuzzSettings FuzzFrames FuzzRing FuzzControl)
if [ $# -gt 0 ]; then harnesses=("$@"); else harnesses=("${all[@]}"); fi
work="${FUZZ_WORK:-$(mktemp -d "${TMPDIR:-/tmp}/agent-fuzz.XXXXXX")}"
mkdir -p "$work"

cd "$root/Fuzz"
flags=(--sanitize=fuzzer --sanitize=address)
echo "fuzz: building the harnesses (swift build ${flags[*]} in Fuzz/)"
if ! swift build "${flags[@]}" >"$work/build.log" 2>&1; then
    cat "$work/build.log"
    echo "fuzz: the build failed"
    exit 1
fi
bin="$(swift build "${flags[@]}" --show-bin-path)"

# Leaks are not checked: Foundation keeps caches and thread-locals (the ICU regex engine's,
# NSRegularExpression's, the process-info and locale singletons) for the life of the process,
# which LeakSanitizer reports as leaks at exit whatever the input. Memory errors (ASan) and
# traps (overflow, out of bounds, fatalError, preconditions) are what is checked.
export ASAN_OPTIONS="detect_leaks=0:abort_on_error=1:symbolize=1:allocator_may_return_null=1"

failed=0
printf '%-13s %12s %9s %7s %7s %8s  %s\n' harness executions exec/s cov ft crashes result
for harness in "${harnesses[@]}"; do
    corpus="$work/corpus/$harness"
    artifacts="$work/artifacts/$harness/"
    mkdir -p "$corpus" "$artifacts"
    log="$work/$harness.log"
    status=0
    # The first folder gets new inputs; the seeds are only read.
    "$bin/$harness" -max_total_time="$seconds" -print_final_stats=1 -timeout=10 -rss_limit_mb=2048 \
        -max_len=4096 -artifact_prefix="$artifacts" "$corpus" "$root/Fuzz/Corpus/$harness" >"$log" 2>&1 || status=$?
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
    fi
    printf '%-13s %12s %9s %7s %7s %8s  %s\n' "$harness" "${execs:-?}" "${rate:-?}" "${cov:-?}" "${ft:-?}" "$crashes" "$result"
    if [ "$result" != ok ]; then
        grep -E 'ERROR|==[0-9]+==|Fatal error|panic|SUMMARY|Test unit written|Base64' "$log" | head -20 | sed 's/^/    /'
        find "$artifacts" -type f | sed 's/^/    input: /'
        echo "    log: $log"
    fi
done
echo "fuzz: ${#harnesses[@]} harness(es) for ${seconds} s each, $failed failed; work folder $work"
[ "$failed" -eq 0 ]
