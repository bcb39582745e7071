"""Written without the SDK: ready, malformed lines of every kind, then `count` good events
numbered from 1, then a heartbeat a second until stdin ends or says stop."""
import json
import sys
import threading

start = json.loads(sys.stdin.readline())["start"]
count = start["settings"]["count"]
out = sys.stdout
out.write('{"ready": true}\n')
bad = [
    "this is not JSON",
    '{"emit": {"type": "x"}, "heartbeat": true}',
    '{"shout": "an unknown frame"}',
    '{"emit": {"payload": 1}}',
    '{"emit": {"type": 42}}',
    '{"start": {"settings": {}, "process": "me"}}',
    '{"message": {"level": "loud", "text": "x"}}',
    '{"answer": {"confidence": 7, "text": "x"}}',
    "[1, 2, 3]",
    "\"a string\"",
    '{"emit": {"type": "big", "payload": "' + "x" * (2 << 20) + '"}}',
]
for line in bad:
    out.write(line + "\n")
for n in range(1, count + 1):
    out.write(json.dumps({"emit": {"type": "py_after_garbage", "payload": {"n": n}}}) + "\n")
out.flush()
stopped = threading.Event()


def read() -> None:
    for line in sys.stdin:
        if '"stop"' in line:
            break
    stopped.set()


threading.Thread(target=read, daemon=True).start()
while not stopped.wait(1):
    out.write('{"heartbeat": true}\n')
    out.flush()
