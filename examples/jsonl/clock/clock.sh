#!/usr/bin/env bash
# A jsonl/1 datasource in bash: no SDK, no JSON library, only lines.
# The runtime writes {"start": {"settings": {...}, "process": NAME}} first; we answer ready,
# then emit a clock_tick event and a heartbeat every interval seconds, and end on
# {"stop": true} or when stdin ends. Anything we print to stderr goes to the process's log.
set -u
read -r start || exit 0
interval=$(printf '%s' "$start" | sed -n 's/.*"interval":[[:space:]]*\([0-9.][0-9.]*\).*/\1/p')
interval=${interval:-1}
echo '{"ready": true}'
echo "clock: ticking every $interval s" >&2
n=0
while true; do
    n=$((n + 1))
    printf '{"emit": {"type": "clock_tick", "payload": {"n": %d, "epoch": %d}}}\n' "$n" "$(date +%s)"
    echo '{"heartbeat": true}'
    # Waiting for a line doubles as the pause: a stop frame ends us at once.
    if read -r -t "$interval" line; then
        case $line in *'"stop"'*) exit 0 ;; esac
    elif [ $? -le 128 ]; then
        exit 0  # stdin ended: the runtime is gone
    fi
done
