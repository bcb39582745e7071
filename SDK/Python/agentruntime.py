"""AgentRuntime modules in Python: the jsonl/1 protocol in one file, standard library only.

A module written in Python is a folder with a ``module.json`` manifest and one program per
process type. The runtime starts the program, writes it a ``start`` frame (its settings) on
stdin, and reads lines of JSON from its stdout; stderr goes to the process's log. This file
speaks that protocol so a program only says what it does::

    import random
    from agentruntime import emit, main

    @emit("reading", every="interval")      # a datasource: an event each `interval` seconds
    def reading(ctx):
        return {"value": random.uniform(0, 100)}

    main()

The four kinds, as decorators (one program may use several):

* ``@emit(type, every=...)``: a datasource. A plain function is called every ``every`` seconds
  (a number, or the name of a setting holding one) and its return value, unless None, is the
  payload of an event of ``type``; a generator function runs once and each value it yields is
  a payload.
* ``@subscribe(*types)``: a monitor. Called with each :class:`Event` the runtime delivers
  (the manifest's ``subscribe`` chooses them; ``types`` filters further, ``*`` patterns work).
* ``@answer(confidence=...)``: a logic adapter. Called with each chat message; returns the
  answer's text (with the decorator's confidence), an :class:`Answer`, a ``(confidence, text)``
  pair, or None (no answer).
* ``@run``: a task handler. Called with each run's input and a :class:`RunContext`, each run
  on a thread of its own; its return value is the run's result; an exception fails the
  attempt (the task's ``retries`` apply). ``ctx.cancelled`` turns true when the run is
  cancelled or the program stops.

What the helper does for every program: answers ``ready`` once ``@on_start`` hooks returned;
sends heartbeats (a quarter of the ``watchdog`` apart) while no handler is stuck (a handler
busy for longer than that without calling the context stops them, so the watchdog sees the
hang); stops on the ``stop`` frame, on the end of stdin or on SIGTERM, finishing what it was
given; keeps the last state saved with :meth:`Context.save_state` (handed back in
``ctx.state`` after a restart); counts malformed input lines and logs the first ones; sends
``print()`` output to stderr (the process log) so that it cannot corrupt the protocol. An exception escaping an
``@emit``, ``@subscribe`` or ``@on_start`` function ends the program with status 1 and the
traceback in the log: the process's restart policy applies. Raise :class:`SettingsError`
(status 78) or :class:`UnusableError` (status 70) instead to say that restarting will not
help: the runtime then marks the process failed with the message.

For tests, :class:`ProgramSession` runs a program the way the runtime does.
"""

from __future__ import annotations

import fnmatch
import inspect
import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
import traceback
from dataclasses import dataclass, field
from typing import IO, Any, Callable, Dict, Iterable, List, Optional, Tuple, Union

__all__ = [
    "PROTOCOL", "Answer", "Context", "Event", "Program", "ProgramSession", "RunContext", "SettingsError", "UnusableError",
    "answer", "emit", "main", "on_start", "on_stop", "run", "subscribe",
]

#: The protocol this file speaks (a manifest's ``"protocol"``).
PROTOCOL = "jsonl/1"
#: Seconds between heartbeats when the process has no watchdog (with one: a quarter of it).
DEFAULT_HEARTBEAT_INTERVAL = 1.0
#: Exit statuses the runtime reads as "do not restart": the settings are wrong (78), the
#: module cannot work (70). Any other failure is a crash, restarted as the policy says.
EXIT_SETTINGS = 78
EXIT_UNUSABLE = 70
#: Malformed input lines logged one by one; later ones are only counted.
MALFORMED_LOGGED = 10
#: Bytes of output kept before they are written out (a flusher thread writes the rest within
#: ``FLUSH_INTERVAL`` seconds; frames that answer something are written at once).
OUTPUT_BUFFER = 64 * 1024
FLUSH_INTERVAL = 0.02
LEVELS = ("debug", "info", "warning", "error", "critical")


@dataclass
class Event:
    """An event delivered to a monitor."""

    type: str
    payload: Any = None
    source: Optional[str] = None
    time: Any = None
    #: Everything the runtime sent for the event (members later versions may add).
    frame: Dict[str, Any] = field(default_factory=dict)


@dataclass
class Answer:
    """A logic adapter's answer: how sure it is (0…1) and what it says."""

    confidence: float
    text: str


class SettingsError(Exception):
    """Raise it (from any handler) when the settings cannot work: the program ends with status
    78 and the message, and the runtime does not restart it until the settings change."""


class UnusableError(Exception):
    """Raise it when the module cannot work here (a missing library, no such device): the
    program ends with status 70 and the message, and the runtime does not restart it."""


class _Output:
    """The protocol's stdout: whole lines under a lock, buffered; what waits is written within
    ``FLUSH_INTERVAL`` by a thread that sleeps while nothing waits (an idle program wakes only
    for its heartbeats)."""

    def __init__(self, stream: IO[bytes]) -> None:
        self._stream = stream
        self._lock = threading.Condition()
        self._pending = bytearray()
        self._closed = False

    def send(self, frame: Dict[str, Any], now: bool = False) -> None:
        self.send_line(_encode(frame).encode() + b"\n", now)

    def send_line(self, line: bytes, now: bool = False) -> None:
        with self._lock:
            if self._closed:
                return
            was_empty = not self._pending
            self._pending += line
            if now or len(self._pending) >= OUTPUT_BUFFER:
                self._write()
            elif was_empty:
                self._lock.notify()

    def wait_for_pending(self) -> bool:
        """Blocks until something waits to be written; False once closed."""
        with self._lock:
            while not self._pending and not self._closed:
                self._lock.wait()
            return not self._closed

    def flush(self) -> None:
        with self._lock:
            if self._pending and not self._closed:
                self._write()

    def close(self) -> None:
        with self._lock:
            if self._pending and not self._closed:
                self._write()
            self._closed = True
            self._lock.notify_all()

    def _write(self) -> None:
        try:
            self._stream.write(self._pending)
            self._stream.flush()
        except (BrokenPipeError, ValueError, OSError):
            # The runtime is gone: nobody reads what this program says any more.
            self._closed = True
        self._pending.clear()


#: Compact JSON; NaN and Infinity are not JSON, so the caller learns of them here. One encoder
#: made once: json.dumps with options makes a new one per call, a third of an emit's time.
_encode = json.JSONEncoder(separators=(",", ":"), allow_nan=False).encode


class _Liveness:
    """Whether every handler thread is waiting or showed life recently (the heartbeat's rule)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._busy: Dict[int, float] = {}  # thread id → when it last showed life while busy

    def busy(self) -> None:
        with self._lock:
            self._busy[threading.get_ident()] = time.monotonic()

    def idle(self) -> bool:
        """Marks this thread waiting; returns whether it was busy."""
        with self._lock:
            return self._busy.pop(threading.get_ident(), None) is not None

    def alive(self) -> None:
        ident = threading.get_ident()
        with self._lock:
            if ident in self._busy:
                self._busy[ident] = time.monotonic()

    def healthy(self, within: float) -> bool:
        now = time.monotonic()
        with self._lock:
            return all(now - seen <= within for seen in self._busy.values())


class Context:
    """What a handler can do: emit events, send messages and alerts, log, save state.

    One context serves the whole program; handlers may call it from any thread.
    """

    def __init__(self, program: "Program", start: Dict[str, Any], output: _Output, liveness: _Liveness) -> None:
        self._program = program
        self._output = output
        self._liveness = liveness
        self._stopping = threading.Event()
        #: The whole start frame's body.
        self.start: Dict[str, Any] = start
        #: The process's name in settings.json.
        self.process: str = str(start.get("process", ""))
        #: The process type from the manifest (when one program serves several).
        self.type: Optional[str] = start.get("type")
        #: The process's settings (defaults filled in by the runtime).
        self.settings: Dict[str, Any] = start.get("settings") or {}
        #: The state this process saved last (before a restart), or None.
        self.state: Any = start.get("state")
        #: While an @answer function runs: the chat's context (its ``conversation``…).
        self.chat: Dict[str, Any] = {}
        self._emit_prefixes: Dict[str, bytes] = {}

    @property
    def stopping(self) -> bool:
        """True once the runtime asked the program to stop."""
        return self._stopping.is_set()

    def emit(self, type: str, payload: Any = None) -> None:
        """Emits an event of ``type`` with ``payload`` (any JSON value)."""
        prefix = self._emit_prefixes.get(type) if isinstance(type, str) else None
        if prefix is None:
            if not isinstance(type, str) or not type:
                raise ValueError(f"an event type must be a non-empty string, found {type!r}")
            prefix = self._emit_prefixes[type] = ('{"emit":{"type":' + _encode(type) + ',"payload":').encode()
        self._liveness.alive()
        self._output.send_line(prefix + _encode(payload).encode() + b"}}\n")

    def message(self, text: str, level: str = "info") -> None:
        """Sends a message (shown on the console and in the agent's conversation)."""
        self._liveness.alive()
        self._output.send({"message": {"level": _level(level), "text": str(text)}}, now=True)

    def alert(self, text: str) -> None:
        """Sends an alert."""
        self._liveness.alive()
        self._output.send({"alert": {"text": str(text)}}, now=True)

    def log(self, text: str, level: str = "info") -> None:
        """Writes a line to the process's log (stderr)."""
        self._liveness.alive()
        _log(text if level == "info" else f"{_level(level)}: {text}")

    def save_state(self, state: Any) -> None:
        """Saves ``state`` (any JSON value); a restarted process finds it in ``ctx.state``."""
        self._liveness.alive()
        self.state = state
        self._output.send({"state": state}, now=True)

    def heartbeat(self) -> None:
        """Says the handler is alive during long work (heartbeats stop while it is stuck)."""
        self._liveness.alive()

    def sleep(self, seconds: float) -> bool:
        """Waits ``seconds`` unless the program is asked to stop; False once stopping."""
        was_busy = self._liveness.idle()
        try:
            return not self._stopping.wait(max(0.0, seconds))
        finally:
            if was_busy:
                self._liveness.busy()


class RunContext(Context):
    """The context of one task run: its id, attempt and progress."""

    def __init__(self, base: Context, frame: Dict[str, Any]) -> None:
        self.__dict__.update(base.__dict__)
        #: The run's id: the same for every attempt, so a key to make the work idempotent.
        self.id: Any = frame.get("id")
        #: Everything the runtime sent for the run.
        self.frame: Dict[str, Any] = frame
        self._cancelled = threading.Event()

    @property
    def cancelled(self) -> bool:
        """True once the run was cancelled (or the program is stopping): end it soon, by
        raising (the run then fails) or returning."""
        return self._cancelled.is_set() or self._stopping.is_set()

    def progress(self, fraction: Optional[float] = None, message: Optional[str] = None) -> None:
        """Reports how far the run got (``fraction`` in 0…1) and what it does now."""
        self._liveness.alive()
        body: Dict[str, Any] = {"id": self.id}
        if fraction is not None:
            body["fraction"] = min(1.0, max(0.0, float(fraction)))
        if message is not None:
            body["message"] = str(message)
        self._output.send({"progress": body}, now=True)


Handler = Callable[..., Any]


@dataclass
class _Emitter:
    function: Handler
    type: str
    every: Union[float, str, None]


@dataclass
class _Subscription:
    function: Handler
    patterns: Tuple[str, ...]

    def matches(self, type: str) -> bool:
        return not self.patterns or any(
            fnmatch.fnmatchcase(type, pattern) if "*" in pattern else type == pattern for pattern in self.patterns
        )


class _Stop(Exception):
    """SIGTERM: stop as on the stop frame."""


class Program:
    """The handlers of one program; the module-level decorators fill a default one."""

    def __init__(self) -> None:
        self.emitters: List[_Emitter] = []
        self.subscriptions: List[_Subscription] = []
        self.answerers: List[Tuple[Handler, float]] = []
        self.runners: List[Handler] = []
        self.starters: List[Handler] = []
        self.stoppers: List[Handler] = []
        self.malformed = 0
        self._terminated = False
        self._interruptible = False
        self._runs: Dict[Any, Tuple[threading.Thread, RunContext]] = {}
        self._runs_lock = threading.Lock()

    # -- declaring ------------------------------------------------------------------------

    def emit(self, type: Union[str, Handler, None] = None, every: Union[float, str, None] = 1.0) -> Any:
        """A datasource function (see the module's documentation); ``type`` defaults to its name."""
        if callable(type):
            function, type = type, None
            return self.emit(every=every)(function)

        def declare(function: Handler) -> Handler:
            self.emitters.append(_Emitter(function, type or function.__name__, every))
            return function

        return declare

    def subscribe(self, *types: str) -> Callable[[Handler], Handler]:
        """A monitor function ``f(event, ctx)``, for events of ``types`` (all when none)."""
        if len(types) == 1 and callable(types[0]):
            function = types[0]
            self.subscriptions.append(_Subscription(function, ()))
            return function  # type: ignore[return-value]

        def declare(function: Handler) -> Handler:
            self.subscriptions.append(_Subscription(function, tuple(types)))
            return function

        return declare

    def answer(self, function: Optional[Handler] = None, *, confidence: float = 1.0) -> Any:
        """A logic adapter function ``f(message, ctx)``; see :class:`Answer`."""

        def declare(function: Handler) -> Handler:
            self.answerers.append((function, float(confidence)))
            return function

        return declare(function) if function is not None else declare

    def run(self, function: Handler) -> Handler:
        """A task handler function ``f(input, ctx)`` returning the run's result (one per program)."""
        if self.runners:
            raise ValueError(f"@run {function.__name__}: this program has a task handler already ({self.runners[0].__name__})")
        self.runners.append(function)
        return function

    def on_start(self, function: Handler) -> Handler:
        """``f(ctx)``, called before the program says ready (open devices, check settings)."""
        self.starters.append(function)
        return function

    def on_stop(self, function: Handler) -> Handler:
        """``f(ctx)``, called once the handlers ended, before the program exits."""
        self.stoppers.append(function)
        return function

    # -- running --------------------------------------------------------------------------

    def main(self, stdin: Optional[IO[bytes]] = None, stdout: Optional[IO[bytes]] = None) -> int:
        """Speaks the protocol on stdin/stdout until stopped; returns the exit status.

        With no streams given it takes the process's own, and points file descriptor 1 (and
        ``print``) at stderr so that nothing but frames reaches the runtime.
        """
        if stdout is None:
            stdout = os.fdopen(os.dup(1), "wb", buffering=0)
            os.dup2(2, 1)
        if stdin is None:
            stdin = sys.stdin.buffer
        output = _Output(stdout)
        liveness = _Liveness()
        previous = self._catch_sigterm()
        try:
            self._interruptible = True
            start = self._read_start(stdin)
            self._interruptible = False
            if start is None:
                _log("stdin ended before the start frame; nothing to do")
                return 0
            context = Context(self, start, output, liveness)
            return self._serve(context, stdin, output, liveness)
        except _Stop:
            return 0
        finally:
            self._interruptible = False
            output.close()
            if previous is not None:
                signal.signal(signal.SIGTERM, previous)

    def _catch_sigterm(self) -> Any:
        """SIGTERM stops the program as the stop frame does: it interrupts the reading of stdin
        (only that: anywhere else it is noticed when the reading begins)."""
        if threading.current_thread() is not threading.main_thread():
            return None

        def stop(signum: int, frame: Any) -> None:
            self._terminated = True
            if self._interruptible:
                raise _Stop()

        previous = signal.signal(signal.SIGTERM, stop)
        # A parent that spawned us with SIGTERM blocked (its threads block it) would leave it
        # pending for ever: the stop timeout's SIGKILL would then be the only way out.
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM})
        return previous

    def _read_start(self, stdin: IO[bytes]) -> Optional[Dict[str, Any]]:
        for line in stdin:
            frame = self._decode(line)
            if frame is None:
                continue
            if "start" in frame and isinstance(frame["start"], dict):
                return frame["start"]
            self._malformed(line, "expected the start frame first")
        return None

    def _serve(self, context: Context, stdin: IO[bytes], output: _Output, liveness: _Liveness) -> int:
        for starter in self.starters:
            try:
                starter(context)
            except Exception:
                _crash(f"@on_start {starter.__name__}", context)
        output.send({"ready": True}, now=True)
        watchdog = _positive(context.start.get("watchdog"), 0)
        interval = watchdog / 4 if watchdog else DEFAULT_HEARTBEAT_INTERVAL
        inbox: "queue.Queue[Optional[Tuple[str, Any]]]" = queue.Queue(maxsize=256)
        threads = [_thread(self._emit_loop, emitter, context) for emitter in self.emitters]
        dispatcher = _thread(self._dispatch, inbox, context)
        _thread(self._heartbeats, context, output, liveness, interval)
        _thread(self._flusher, context, output)
        try:
            self._interruptible = True
            for line in stdin if not self._terminated else ():
                frame = self._decode(line)
                if frame is None:
                    continue
                if frame.get("stop") is True:
                    break
                item = self._work_item(frame, line)
                if item is None:
                    continue
                if item[0] == "run":
                    self._start_run(item[1], context)
                elif item[0] == "cancel":
                    self._cancel_run(item[1])
                else:
                    inbox.put(item)
        except _Stop:
            pass
        self._interruptible = False
        context._stopping.set()
        inbox.put(None)
        with self._runs_lock:
            running = [thread for thread, _ in self._runs.values()]
        for thread in threads + [dispatcher] + running:
            thread.join()
        for stopper in self.stoppers:
            stopper(context)
        if self.malformed > MALFORMED_LOGGED:
            _log(f"{self.malformed} malformed input lines in all")
        return 0

    def _work_item(self, frame: Dict[str, Any], line: bytes) -> Optional[Tuple[str, Any]]:
        for kind in ("event", "chat", "run", "cancel"):
            body = frame.get(kind)
            if body is None:
                continue
            if not isinstance(body, dict):
                self._malformed(line, f"'{kind}' must be an object")
                return None
            required = {"event": "type", "chat": "message"}.get(kind)
            if required is not None and not isinstance(body.get(required), str):
                self._malformed(line, f"'{kind}' needs a string '{required}'")
                return None
            return (kind, body)
        if "start" in frame:
            self._malformed(line, "a second start frame")
        # Other frames are from a later protocol version: ignored, as jsonl/1 says.
        return None

    def _decode(self, line: bytes) -> Optional[Dict[str, Any]]:
        text = line.strip()
        if not text:
            return None
        try:
            frame = json.loads(text)
        except (ValueError, UnicodeDecodeError) as error:
            self._malformed(line, f"not JSON ({error})")
            return None
        if not isinstance(frame, dict):
            self._malformed(line, "a frame must be a JSON object")
            return None
        return frame

    def _malformed(self, line: bytes, why: str) -> None:
        self.malformed += 1
        if self.malformed <= MALFORMED_LOGGED:
            shown = line[:200].decode("utf-8", "replace").rstrip()
            _log(f"malformed input line ignored: {why}: {shown}")
            if self.malformed == MALFORMED_LOGGED:
                _log("further malformed input lines are counted, not logged")

    # -- the threads ----------------------------------------------------------------------

    def _emit_loop(self, emitter: _Emitter, context: Context) -> None:
        liveness = context._liveness
        liveness.busy()
        try:
            if inspect.isgeneratorfunction(emitter.function):
                for payload in emitter.function(context):
                    if context.stopping:
                        break
                    if payload is not None:
                        context.emit(emitter.type, payload)
                return
            every = _interval(emitter, context.settings)
            due = time.monotonic()
            while not context.stopping:
                payload = emitter.function(context)
                if payload is not None:
                    context.emit(emitter.type, payload)
                due = max(due + every, time.monotonic())
                if not context.sleep(due - time.monotonic()):
                    break
        except Exception:
            _crash(f"@emit {emitter.function.__name__}", context)
        finally:
            liveness.idle()

    def _dispatch(self, inbox: "queue.Queue[Optional[Tuple[str, Any]]]", context: Context) -> None:
        liveness = context._liveness
        while True:
            if inbox.empty():
                context._output.flush()
            item = inbox.get()
            if item is None:
                return
            liveness.busy()
            try:
                kind, body = item
                if kind == "event":
                    self._deliver(body, context)
                else:
                    self._chat(body, context)
            finally:
                liveness.idle()

    def _deliver(self, body: Dict[str, Any], context: Context) -> None:
        type = body["type"]
        event = Event(type=type, payload=body.get("payload"), source=body.get("source"), time=body.get("time"), frame=body)
        for subscription in self.subscriptions:
            if subscription.matches(type):
                try:
                    subscription.function(event, context)
                except Exception:
                    _crash(f"@subscribe {subscription.function.__name__}", context)

    def _chat(self, body: Dict[str, Any], context: Context) -> None:
        message = body["message"]
        context.chat = body.get("context") if isinstance(body.get("context"), dict) else {}
        best = Answer(0.0, "")
        for function, confidence in self.answerers:
            try:
                found = _as_answer(function(message, context), confidence)
            except Exception:
                _log(f"@answer {function.__name__} failed on {message!r}:\n{traceback.format_exc()}")
                continue
            if found is not None and found.confidence > best.confidence:
                best = found
        reply: Dict[str, Any] = {"confidence": best.confidence, "text": best.text}
        if "id" in body:
            reply["id"] = body["id"]
        context._output.send({"answer": reply}, now=True)

    def _start_run(self, body: Dict[str, Any], context: Context) -> None:
        """Each run on a thread of its own: a task handler may have several at once."""
        run_context = RunContext(context, body)
        thread = threading.Thread(target=self._run, args=(run_context,), daemon=True)
        with self._runs_lock:
            self._runs[run_context.id] = (thread, run_context)
        thread.start()

    def _cancel_run(self, body: Dict[str, Any]) -> None:
        with self._runs_lock:
            found = self._runs.get(body.get("id"))
        if found is not None:
            found[1]._cancelled.set()

    def _run(self, context: RunContext) -> None:
        liveness = context._liveness
        liveness.busy()
        try:
            if not self.runners:
                raise UnusableError("this program handles no runs (it has no @run function)")
            result = self.runners[0](context.frame.get("input"), context)
            context._output.send({"result": {"id": context.id, "output": result}}, now=True)
        except (SettingsError, UnusableError) as error:
            context._output.send({"error": {"id": context.id, "message": str(error)}}, now=True)
            _crash(f"@run {self.runners[0].__name__ if self.runners else '(none)'}", context)
        except Exception as error:
            _log(f"run {context.id} failed:\n{traceback.format_exc()}")
            context._output.send({"error": {"id": context.id, "message": f"{type(error).__name__}: {error}"}}, now=True)
        finally:
            liveness.idle()
            with self._runs_lock:
                self._runs.pop(context.id, None)

    def _heartbeats(self, context: Context, output: _Output, liveness: _Liveness, interval: float) -> None:
        while not context._stopping.wait(interval):
            if liveness.healthy(within=interval):
                output.send({"heartbeat": True}, now=True)

    def _flusher(self, context: Context, output: _Output) -> None:
        while output.wait_for_pending():
            time.sleep(FLUSH_INTERVAL)
            output.flush()


def _as_answer(value: Any, confidence: float) -> Optional[Answer]:
    if value is None:
        return None
    if isinstance(value, Answer):
        found = value
    elif isinstance(value, str):
        found = Answer(confidence, value)
    elif isinstance(value, tuple) and len(value) == 2:
        found = Answer(float(value[0]), str(value[1]))
    else:
        raise TypeError(f"an @answer function returns a str, an Answer, (confidence, text) or None, not {type(value).__name__}")
    if not 0 <= found.confidence <= 1:
        raise ValueError(f"a confidence is a number from 0 to 1, found {found.confidence}")
    return found


def _interval(emitter: _Emitter, settings: Dict[str, Any]) -> float:
    every = emitter.every
    if isinstance(every, str):
        value = settings.get(every)
        if not isinstance(value, (int, float)) or isinstance(value, bool) or value <= 0:
            raise SettingsError(f"@emit {emitter.function.__name__}: setting '{every}' must be a number of seconds above 0, found {value!r}")
        return float(value)
    if every is None or every <= 0:
        raise ValueError(f"@emit {emitter.function.__name__}: 'every' must be a number of seconds above 0 (or a generator function)")
    return float(every)


def _positive(value: Any, default: float) -> float:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0 else default


def _level(level: str) -> str:
    if level not in LEVELS:
        raise ValueError(f"a level is one of {', '.join(LEVELS)}, found {level!r}")
    return level


def _log(text: str) -> None:
    try:
        sys.stderr.write(text.rstrip("\n") + "\n")
        sys.stderr.flush()
    except (OSError, ValueError):
        pass


def _thread(target: Callable[..., None], *arguments: Any) -> threading.Thread:
    thread = threading.Thread(target=target, args=arguments, daemon=True)
    thread.start()
    return thread


def _crash(where: str, context: Context) -> None:
    """An exception escaped a handler: log it, say why in an error frame and end: status 78
    for a SettingsError, 70 for an UnusableError (neither restarted), else 1 (a crash, restarted
    as the policy says)."""
    error = sys.exc_info()[1]
    if isinstance(error, (SettingsError, UnusableError)):
        _log(f"{where}: {error}")
        message = str(error)
        status = EXIT_SETTINGS if isinstance(error, SettingsError) else EXIT_UNUSABLE
    else:
        _log(f"{where} raised; the program ends:\n{traceback.format_exc()}")
        message = f"{where} raised {type(error).__name__}: {error}"
        status = 1
    context._output.send({"error": {"message": message}}, now=True)
    context._output.close()
    os._exit(status)


# -- the default program and its decorators ---------------------------------------------------

_default = Program()
emit = _default.emit
subscribe = _default.subscribe
answer = _default.answer
run = _default.run
on_start = _default.on_start
on_stop = _default.on_stop


def main() -> None:
    """Runs the decorated functions of this program until the runtime stops it."""
    sys.exit(_default.main())


# -- testing ----------------------------------------------------------------------------------


class ProgramSession:
    """Runs a program as the runtime does, for tests: start frame in, frames out.

    ::

        with ProgramSession(["python3", "source.py"], settings={"interval": 0.1}) as session:
            frame = session.wait_for("emit")
    """

    def __init__(self, command: List[str], settings: Optional[Dict[str, Any]] = None, process: str = "test",
                 state: Any = None, cwd: Optional[str] = None, env: Optional[Dict[str, str]] = None,
                 watchdog: Optional[float] = None) -> None:
        start: Dict[str, Any] = {"settings": settings or {}, "process": process}
        if state is not None:
            start["state"] = state
        if watchdog is not None:
            start["watchdog"] = watchdog
        self.start = start
        self.frames: List[Dict[str, Any]] = []
        self._unread: "queue.Queue[Optional[Dict[str, Any]]]" = queue.Queue()
        self._stderr: List[str] = []
        self.process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                        cwd=cwd, env=env)
        _thread(self._read_stdout)
        _thread(self._read_stderr)
        self.send({"start": start})

    def __enter__(self) -> "ProgramSession":
        return self

    def __exit__(self, *exception: Any) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()
        for stream in (self.process.stdin, self.process.stdout, self.process.stderr):
            try:
                if stream is not None:
                    stream.close()
            except OSError:
                pass

    @property
    def stderr(self) -> str:
        """What the program wrote to its log so far."""
        return "".join(self._stderr)

    def send(self, frame: Dict[str, Any]) -> None:
        """Writes one frame to the program's stdin."""
        self.send_line(json.dumps(frame).encode())

    def send_line(self, line: bytes) -> None:
        """Writes one line as it is (to test malformed input)."""
        assert self.process.stdin is not None
        self.process.stdin.write(line.rstrip(b"\n") + b"\n")
        self.process.stdin.flush()

    def next_frame(self, timeout: float = 30) -> Dict[str, Any]:
        """The next frame the program writes; raises TimeoutError, or EOFError once it ended."""
        try:
            frame = self._unread.get(timeout=timeout)
        except queue.Empty:
            raise TimeoutError(f"no frame within {timeout} s; stderr:\n{self.stderr}") from None
        if frame is None:
            self._unread.put(None)
            raise EOFError(f"the program's stdout ended; stderr:\n{self.stderr}")
        return frame

    def wait_for(self, kind: str, timeout: float = 30, where: Optional[Callable[[Any], bool]] = None) -> Any:
        """The body of the next ``kind`` frame (that ``where`` accepts), skipping others."""
        deadline = time.monotonic() + timeout
        while True:
            frame = self.next_frame(max(0.0, deadline - time.monotonic()))
            if kind in frame and (where is None or where(frame[kind])):
                return frame[kind]

    def stop(self, timeout: float = 30) -> int:
        """Sends the stop frame, closes stdin and returns the exit status."""
        if self.process.poll() is None:
            try:
                self.send({"stop": True})
                assert self.process.stdin is not None
                self.process.stdin.close()
            except (BrokenPipeError, OSError):
                pass
        return self.process.wait(timeout=timeout)

    def _read_stdout(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            try:
                frame = json.loads(line)
            except ValueError:
                frame = {"unparsed": line.decode("utf-8", "replace")}
            self.frames.append(frame)
            self._unread.put(frame)
        self._unread.put(None)

    def _read_stderr(self) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:
            self._stderr.append(line.decode("utf-8", "replace"))
