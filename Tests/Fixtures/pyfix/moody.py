"""A logic adapter that misbehaves as its settings' `mode` says (written without the SDK).

never: reads every message, answers none.
With `helper` (a program's path), each start first starts `helper 600` and leaves it running.
exit_once: exits with status 3 at its first message when `marker` does not exist (creating it);
  afterwards answers every message "back again" (confidence 0.9).
slow_reader: sleeps `delay` seconds for every line it reads; answers messages naming "slow".
exit_before_ready_once: exits with status 4 before it says ready when `marker` does not exist
  (creating it); afterwards answers every message "back again".
stray: answers every message "right one" (confidence 0.9), after an answer naming an id no
  message had and the answer it gave the message before again.
"""
import json
import os
import subprocess
import sys
import time


def say(frame):
    sys.stdout.write(json.dumps(frame) + "\n")
    sys.stdout.flush()


settings = {}
last_id = None
for line in sys.stdin:
    frame = json.loads(line)
    if "start" in frame:
        settings = frame["start"].get("settings") or {}
        if settings.get("helper"):
            subprocess.Popen([settings["helper"], "600"], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
        if settings.get("mode") == "exit_before_ready_once" and not os.path.exists(settings["marker"]):
            open(settings["marker"], "w").close()
            os._exit(4)
        say({"ready": True})
        continue
    if "stop" in frame:
        break
    mode = settings.get("mode", "never")
    if mode == "slow_reader":
        time.sleep(settings.get("delay", 0.02))
    chat = frame.get("chat")
    if chat is None:
        continue
    if mode == "exit_before_ready_once":
        say({"answer": {"confidence": 0.9, "text": "back again", "id": chat.get("id")}})
    elif mode == "exit_once":
        marker = settings["marker"]
        if not os.path.exists(marker):
            open(marker, "w").close()
            os._exit(3)
        say({"answer": {"confidence": 0.9, "text": "back again", "id": chat.get("id")}})
    elif mode == "stray":
        say({"answer": {"confidence": 1, "text": "stray", "id": "no-such-message"}})
        if last_id is not None:
            say({"answer": {"confidence": 1, "text": "again", "id": last_id}})
        say({"answer": {"confidence": 0.9, "text": "right one", "id": chat.get("id")}})
        last_id = chat.get("id")
    elif mode == "slow_reader" and "slow" in chat["message"]:
        say({"answer": {"confidence": 0.9, "text": "slow but here", "id": chat.get("id")}})
    elif mode == "slow_reader":
        say({"answer": {"confidence": 0, "text": "", "id": chat.get("id")}})
