"""Tests of agentruntime.py: real programs in child processes, spoken to as the runtime does.

Run with ``python3 -m unittest discover`` in this folder (the Swift suite PythonSDKTests runs it).
"""

import ast
import os
import signal
import sys
import tempfile
import textwrap
import time
import unittest
from typing import Any, Dict, List, Optional

from agentruntime import ProgramSession

HERE = os.path.dirname(os.path.abspath(__file__))


class ProgramTestCase(unittest.TestCase):
    """Writes a program to a temporary folder and runs it with this agentruntime.py."""

    def setUp(self) -> None:
        self.folder = tempfile.TemporaryDirectory()
        self.addCleanup(self.folder.cleanup)

    def session(self, source: str, settings: Optional[Dict[str, Any]] = None, **options: Any) -> ProgramSession:
        path = os.path.join(self.folder.name, "program.py")
        with open(path, "w") as file:
            file.write(textwrap.dedent(source))
        environment = dict(os.environ, PYTHONPATH=HERE, PYTHONDONTWRITEBYTECODE="1")
        session = ProgramSession([sys.executable, path], settings=settings, env=environment, **options)
        self.addCleanup(session.__exit__)
        return session

    def wait_until(self, condition: Any, what: str, timeout: float = 30) -> None:
        deadline = time.monotonic() + timeout
        while not condition():
            if time.monotonic() > deadline:
                self.fail(f"not within {timeout} s: {what}")
            time.sleep(0.01)


class DatasourceTests(ProgramTestCase):
    def test_a_function_emits_every_interval_from_its_setting_after_ready(self) -> None:
        session = self.session("""
            from agentruntime import emit, main

            @emit("reading", every="interval")
            def reading(ctx):
                return {"value": 42, "process": ctx.process}

            main()
        """, settings={"interval": 0.05}, process="station")
        self.assertEqual(session.next_frame(), {"ready": True})
        for _ in range(3):
            self.assertEqual(session.wait_for("emit"), {"type": "reading", "payload": {"value": 42, "process": "station"}})
        self.assertEqual(session.stop(), 0)

    def test_a_generator_emits_each_value_it_yields_and_none_is_skipped(self) -> None:
        session = self.session("""
            from agentruntime import emit, main

            @emit
            def counter(ctx):
                for n in range(5):
                    yield None if n == 2 else n
                while ctx.sleep(10):
                    pass

            main()
        """)
        payloads = [session.wait_for("emit")["payload"] for _ in range(4)]
        self.assertEqual(payloads, [0, 1, 3, 4])
        self.assertEqual({frame["emit"]["type"] for frame in session.frames if "emit" in frame}, {"counter"})
        self.assertEqual(session.stop(), 0)

    def test_a_missing_interval_setting_ends_the_program_naming_it(self) -> None:
        session = self.session("""
            from agentruntime import emit, main

            @emit("reading", every="interval")
            def reading(ctx):
                return 1

            main()
        """)
        self.assertEqual(session.process.wait(timeout=30), 78)
        self.assertEqual(session.wait_for("error"), {"message": "@emit reading: setting 'interval' must be a number of seconds above 0, found None"})

    def test_an_exception_ends_the_program_with_status_1_and_its_traceback(self) -> None:
        session = self.session("""
            from agentruntime import emit, main

            @emit("reading", every=0.01)
            def reading(ctx):
                raise RuntimeError("the sensor is gone")

            main()
        """)
        self.assertEqual(session.process.wait(timeout=30), 1)
        self.wait_until(lambda: "RuntimeError: the sensor is gone" in session.stderr, "the traceback")
        self.assertEqual(session.wait_for("error"), {"message": "@emit reading raised RuntimeError: the sensor is gone"})

    def test_a_payload_that_is_not_json_is_an_error_in_the_program_not_a_bad_line(self) -> None:
        session = self.session("""
            from agentruntime import emit, main

            @emit("reading", every=0.01)
            def reading(ctx):
                return {"value": float("nan")}

            main()
        """)
        self.assertEqual(session.process.wait(timeout=30), 1)
        self.wait_until(lambda: "Out of range float values are not JSON compliant" in session.stderr, "the error")
        self.assertFalse([frame for frame in session.frames if "emit" in frame or "unparsed" in frame])

    def test_an_event_type_must_be_a_non_empty_string(self) -> None:
        session = self.session("""
            from agentruntime import emit, main

            @emit("reading", every=0.01)
            def reading(ctx):
                ctx.emit("fine", 1)
                ctx.emit(["not", "a", "type"], 2)

            main()
        """)
        self.assertEqual(session.process.wait(timeout=30), 1)
        self.assertEqual(session.wait_for("emit"), {"type": "fine", "payload": 1})
        self.assertIn("an event type must be a non-empty string, found ['not', 'a', 'type']", session.wait_for("error")["message"])

    def test_print_goes_to_the_log_never_between_the_frames(self) -> None:
        session = self.session("""
            import os
            from agentruntime import emit, main

            @emit("reading", every=0.05)
            def reading(ctx):
                print("hello from print")
                os.write(1, b"written to fd 1\\n")
                return 1

            main()
        """)
        session.wait_for("emit")
        self.wait_until(lambda: "hello from print" in session.stderr and "written to fd 1" in session.stderr, "the output in the log")
        self.assertEqual(session.stop(), 0)
        self.assertFalse([frame for frame in session.frames if "unparsed" in frame], session.frames)


class MonitorTests(ProgramTestCase):
    PROGRAM = """
        from agentruntime import main, subscribe

        @subscribe("reading", "trade.*")
        def watch(event, ctx):
            if event.payload["value"] > ctx.settings["threshold"]:
                ctx.alert(f"{event.type} from {event.source}: {event.payload['value']}")
            ctx.save_state({"seen": (ctx.state or {}).get("seen", 0) + 1})

        main()
    """

    def test_events_of_its_types_are_delivered_and_alerts_and_state_come_back(self) -> None:
        session = self.session(self.PROGRAM, settings={"threshold": 10}, state={"seen": 5})
        session.wait_for("ready")
        session.send({"event": {"type": "other", "source": "x", "payload": {"value": 99}}})
        session.send({"event": {"type": "reading", "source": "station", "payload": {"value": 3}}})
        self.assertEqual(session.wait_for("state"), {"seen": 6})
        session.send({"event": {"type": "trade.eth", "source": "feed", "payload": {"value": 11}}})
        self.assertEqual(session.wait_for("alert"), {"text": "trade.eth from feed: 11"})
        self.assertEqual(session.wait_for("state"), {"seen": 7})
        self.assertEqual(session.stop(), 0)
        self.assertEqual(len([frame for frame in session.frames if "alert" in frame]), 1)

    def test_malformed_lines_are_counted_logged_a_few_times_and_change_nothing(self) -> None:
        session = self.session(self.PROGRAM, settings={"threshold": 10})
        session.wait_for("ready")
        for line in [b"not json", b"[1, 2]", b'{"event": 7}', b'{"event": {"payload": 1}}', b"\xff\xfe"] * 4:
            session.send_line(line)
        session.send({"some_later_frame": {}})
        session.send({"event": {"type": "reading", "source": "s", "payload": {"value": 50}}})
        self.assertEqual(session.wait_for("alert"), {"text": "reading from s: 50"})
        self.assertEqual(session.stop(), 0)
        logged = [line for line in session.stderr.splitlines() if line.startswith("malformed input line ignored")]
        self.assertEqual(len(logged), 10, session.stderr)
        self.assertIn("not JSON", logged[0])
        self.assertIn("a frame must be a JSON object", logged[1])
        self.assertIn("'event' must be an object", logged[2])
        self.assertIn("'event' needs a string 'type'", logged[3])
        self.assertIn("further malformed input lines are counted, not logged", session.stderr)
        self.assertIn("20 malformed input lines in all", session.stderr)

    def test_lines_before_the_start_frame_are_ignored_and_no_start_is_a_quiet_end(self) -> None:
        session = self.session(self.PROGRAM, settings={"threshold": 10})
        self.assertEqual(session.next_frame(), {"ready": True})
        self.assertEqual(session.stop(), 0)
        path = os.path.join(self.folder.name, "program.py")
        environment = dict(os.environ, PYTHONPATH=HERE, PYTHONDONTWRITEBYTECODE="1")
        import subprocess
        finished = subprocess.run([sys.executable, path], input=b'garbage\n{"event": {"type": "x"}}\n', capture_output=True, env=environment, timeout=30)
        self.assertEqual(finished.returncode, 0)
        self.assertEqual(finished.stdout, b"")
        self.assertIn(b"expected the start frame first", finished.stderr)
        self.assertIn(b"stdin ended before the start frame", finished.stderr)


class AdapterTests(ProgramTestCase):
    def test_the_most_confident_answer_is_given_and_none_means_no_answer(self) -> None:
        session = self.session("""
            from agentruntime import Answer, answer, main

            @answer(confidence=0.6)
            def weather(message, ctx):
                return f"sunny for {ctx.chat['conversation']}" if "weather" in message else None

            @answer
            def exact(message, ctx):
                if message == "weather exactly?":
                    return Answer(0.9, "exactly sunny")
                if message == "boom":
                    raise KeyError("broken")
                if message == "too sure":
                    return (1.5, "certainly")
                return (0.1, "maybe")

            main()
        """)
        session.wait_for("ready")
        session.send({"chat": {"message": "how is the weather?", "context": {"conversation": "c1"}}})
        self.assertEqual(session.wait_for("answer"), {"confidence": 0.6, "text": "sunny for c1"})
        session.send({"chat": {"message": "weather exactly?", "context": {"conversation": "c1"}, "id": 7}})
        self.assertEqual(session.wait_for("answer"), {"confidence": 0.9, "text": "exactly sunny", "id": 7})
        session.send({"chat": {"message": "boom", "context": {}}})
        self.assertEqual(session.wait_for("answer"), {"confidence": 0.0, "text": ""})
        self.wait_until(lambda: "KeyError: 'broken'" in session.stderr, "the adapter's error in the log")
        session.send({"chat": {"message": "too sure", "context": {}}})
        self.assertEqual(session.wait_for("answer"), {"confidence": 0.0, "text": ""})
        self.wait_until(lambda: "a confidence is a number from 0 to 1, found 1.5" in session.stderr, "the refused confidence in the log")
        self.assertEqual(session.stop(), 0)


class TaskTests(ProgramTestCase):
    def test_a_run_reports_progress_and_its_result_and_an_exception_fails_it(self) -> None:
        session = self.session("""
            from agentruntime import main, run

            @run
            def summary(input, ctx):
                ctx.progress(0.5, "counting")
                if not input["values"]:
                    raise ValueError("no values")
                return {"count": len(input["values"]), "run": ctx.id}

            main()
        """)
        session.wait_for("ready")
        session.send({"run": {"id": "r1", "input": {"values": [1, 2]}}})
        self.assertEqual(session.wait_for("progress"), {"id": "r1", "fraction": 0.5, "message": "counting"})
        self.assertEqual(session.wait_for("result"), {"id": "r1", "output": {"count": 2, "run": "r1"}})
        session.send({"run": {"id": "r2", "input": {"values": []}}})
        self.assertEqual(session.wait_for("error"), {"id": "r2", "message": "ValueError: no values"})
        self.assertEqual(session.stop(), 0)

    def test_runs_go_on_at_once_and_a_cancelled_one_ends_with_an_error(self) -> None:
        session = self.session("""
            from agentruntime import main, run

            @run
            def wait(input, ctx):
                if input == "forever":
                    while not ctx.cancelled:
                        ctx.sleep(0.01)
                    raise RuntimeError("cancelled")
                return input

            main()
        """)
        session.wait_for("ready")
        session.send({"run": {"id": "long", "input": "forever"}})
        session.send({"run": {"id": "short", "input": 7}})
        self.assertEqual(session.wait_for("result"), {"id": "short", "output": 7})
        session.send({"cancel": {"id": "long"}})
        self.assertEqual(session.wait_for("error"), {"id": "long", "message": "RuntimeError: cancelled"})
        self.assertEqual(session.stop(), 0)

    def test_wrong_settings_and_an_unusable_module_end_with_their_statuses(self) -> None:
        for error, status in (("SettingsError", 78), ("UnusableError", 70)):
            session = self.session(f"""
                from agentruntime import {error}, main, on_start, run

                @on_start
                def check(ctx):
                    raise {error}("no device at /dev/ttyX")

                @run
                def work(input, ctx):
                    return 1

                main()
            """)
            self.assertEqual(session.process.wait(timeout=30), status)
            self.assertEqual(session.wait_for("error"), {"message": "no device at /dev/ttyX"})
            self.assertFalse([frame for frame in session.frames if "ready" in frame])


class LifecycleTests(ProgramTestCase):
    PROGRAM = """
        import sys
        from agentruntime import main, on_start, on_stop, subscribe

        @on_start
        def opened(ctx):
            ctx.log("opened")

        @subscribe
        def watch(event, ctx):
            if event.type == "hang":
                while True:
                    pass

        @on_stop
        def closed(ctx):
            ctx.log("closed")

        main()
    """

    def test_heartbeats_come_while_idle_and_stop_while_a_handler_hangs(self) -> None:
        session = self.session(self.PROGRAM, watchdog=0.2)
        session.wait_for("ready")
        for _ in range(3):
            session.wait_for("heartbeat")
        session.send({"event": {"type": "hang", "payload": None}})
        # Once the handler is stuck, heartbeats stop: at most the one already on its way.
        deadline = time.monotonic() + 60
        while True:
            try:
                session.next_frame(timeout=2)
            except TimeoutError:
                break
            self.assertLess(time.monotonic(), deadline, "heartbeats went on while the handler hung")
        session.process.kill()

    def test_the_stop_frame_sigterm_and_the_end_of_stdin_each_end_it_cleanly(self) -> None:
        for how in ("stop", "sigterm", "eof"):
            session = self.session(self.PROGRAM)
            session.wait_for("ready")
            self.wait_until(lambda: "opened" in session.stderr, "on_start")
            if how == "stop":
                status = session.stop()
            elif how == "sigterm":
                session.process.send_signal(signal.SIGTERM)
                status = session.process.wait(timeout=30)
            else:
                assert session.process.stdin is not None
                session.process.stdin.close()
                status = session.process.wait(timeout=30)
            self.assertEqual(status, 0, how)
            self.wait_until(lambda: "closed" in session.stderr, f"on_stop after {how}")


class CompatibilityTests(unittest.TestCase):
    def test_the_helper_is_python_3_9_syntax(self) -> None:
        with open(os.path.join(HERE, "agentruntime.py")) as file:
            ast.parse(file.read(), feature_version=(3, 9))

    def test_the_helper_imports_only_the_standard_library(self) -> None:
        with open(os.path.join(HERE, "agentruntime.py")) as file:
            tree = ast.parse(file.read())
        imported: List[str] = []
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                imported += [alias.name.split(".")[0] for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                imported.append(node.module.split(".")[0])
        standard = getattr(sys, "stdlib_module_names", None)
        if standard is None:
            self.skipTest("sys.stdlib_module_names needs Python 3.10")
        self.assertEqual([name for name in imported if name not in standard and name != "__future__"], [])


if __name__ == "__main__":
    unittest.main()
