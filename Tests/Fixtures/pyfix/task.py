"""Doubles the input's value; fails the first `fail_first` attempts of each run (counted in a
file per run under `scratch`, so that the count survives the attempts). With `blob`, returns a
string of that many bytes instead (an output over the line limit)."""
import os

from agentruntime import main, run


@run
def double(input, ctx):
    if "blob" in input:
        return {"blob": "x" * input["blob"]}
    path = os.path.join(ctx.settings["scratch"], f"attempts-{ctx.id}")
    attempts = int(open(path).read()) + 1 if os.path.exists(path) else 1
    with open(path, "w") as file:
        file.write(str(attempts))
    ctx.progress(0.5, f"attempt {attempts}")
    if attempts <= ctx.settings["fail_first"]:
        raise RuntimeError(f"attempt {attempts} fails on purpose")
    return {"doubled": input["value"] * 2, "attempts": attempts}


main()
