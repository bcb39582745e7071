"""Misbehaves as `mode` says, `after` seconds after it started."""
import os
import sys
import time

from agentruntime import SettingsError, emit, main, on_start


@on_start
def before_ready(ctx):
    mode = ctx.settings["mode"]
    if mode == "never_ready":
        print("never saying ready", file=sys.stderr, flush=True)
        while True:
            time.sleep(3600)
    if mode == "bad_settings":
        raise SettingsError("bad_settings: this process cannot work with these settings")


@emit(every=0.001)
def misbehave(ctx):
    settings = ctx.settings
    mode = settings["mode"]
    if mode == "flood":
        pad = "x" * settings["payload_bytes"]
        for n in range(1, settings["count"] + 1):
            ctx.emit("py_flood", {"n": n, "pad": pad})
        # The end comes `after` seconds later: a dropping queue has drained by then.
        if not ctx.sleep(settings["after"]):
            return None
        ctx.emit("py_end", {"count": settings["count"]})
        while ctx.sleep(3600):
            pass
        return None
    ctx.emit("py_fault_started", {"mode": mode, "pid": os.getpid()})
    if not ctx.sleep(settings["after"]):
        return None
    if mode == "crash":
        raise RuntimeError("crashing on purpose")
    if mode == "hang":
        print("hanging on purpose", file=sys.stderr, flush=True)
        while True:
            pass
    while ctx.sleep(3600):
        pass
    return None


main()
