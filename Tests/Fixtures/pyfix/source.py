"""`count` numbered events of `type` (0: no end), on from the saved state; then one `end_type`
event with how many and the last number."""
from agentruntime import emit, main


@emit(every=0.001)
def numbered(ctx):
    settings = ctx.settings
    first = (ctx.state or {}).get("n", 0) + 1
    n = first
    while not ctx.stopping and (settings["count"] == 0 or n - first < settings["count"]):
        ctx.emit(settings["event_type"], {"n": n})
        if settings["save_state"]:
            ctx.save_state({"n": n})
        n += 1
        if settings["interval"] and not ctx.sleep(settings["interval"]):
            return None
    ctx.emit(settings["end_type"], {"count": n - first, "last": n - 1})
    while ctx.sleep(3600):
        pass


main()
