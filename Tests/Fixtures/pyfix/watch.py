"""Checks each source's numbering; reports on the end event; echoes with `echo`."""
import os
import time

from agentruntime import main, subscribe

seen = {}
gaps = 0
count = 0


@subscribe
def watch(event, ctx):
    global gaps, count
    if event.type == ctx.settings["end_type"]:
        ctx.message(f"py_watch saw {count} events from {sorted(seen)} with {gaps} gaps; the end says {event.payload}")
        return
    count += 1
    if count == 1 and ctx.settings.get("first_delay"):
        time.sleep(ctx.settings["first_delay"])
    if count == 1 and ctx.settings.get("first_wait_for"):
        # Held at the first event until the test creates this file (at most 300 s).
        deadline = time.monotonic() + 300
        while not os.path.exists(ctx.settings["first_wait_for"]) and time.monotonic() < deadline:
            time.sleep(0.05)
    if ctx.settings["delay"]:
        time.sleep(ctx.settings["delay"])
    n = event.payload.get("n") if isinstance(event.payload, dict) else None
    if isinstance(n, int):
        if n != seen.get(event.source, 0) + 1:
            gaps += 1
        seen[event.source] = n
    if ctx.settings["echo"]:
        ctx.emit("py_seen", {"type": event.type, "source": event.source, "count": count})


main()
