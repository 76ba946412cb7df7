"""The blocking client's own transport: blocking pipes, no event loop, calls from many threads,
and the same failures as the asyncio client (a killed server, a crash, a frame over the limit)."""

from __future__ import annotations

import asyncio
import inspect
import os
import signal
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import BINARY, MEMORY_ARGS, loop_events, sample_events
from test_robustness import CRASHING_SERVER

from threadkeeper import (
    AsyncThread,
    AsyncThreadKeeper,
    ErrorCode,
    RequestTimeoutError,
    ServerExitedError,
    Thread,
    ThreadKeeper,
    ThreadKeeperError,
    _blocking_connection,
)


@pytest.fixture(params=[True, False], ids=["caller-reads", "reader-thread"])
def either_reader(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """Runs a test with callers reading the output themselves, and with the reader thread used
    where pipes cannot be polled (Windows)."""
    monkeypatch.setattr(_blocking_connection, "READS_ON_CALLER", request.param)


def public_methods(cls: type) -> dict[str, inspect.Signature]:
    return {
        name: inspect.signature(member)
        for name, member in vars(cls).items()
        if not name.startswith("_") and inspect.iscoroutinefunction(member)
    }


@pytest.mark.parametrize(("asynchronous", "blocking"), [(AsyncThread, Thread), (AsyncThreadKeeper, ThreadKeeper)])
def test_every_async_method_has_its_blocking_form(asynchronous: type, blocking: type) -> None:
    for name, signature in public_methods(asynchronous).items():
        assert hasattr(blocking, name), f"{blocking.__name__}.{name} is missing: add its line in sync.py"
        derived = getattr(blocking, name)
        assert not inspect.iscoroutinefunction(derived)
        assert derived.__doc__ == getattr(asynchronous, name).__doc__
        assert derived.__qualname__ == f"{blocking.__name__}.{name}"
    # The wrapper takes the async method's parameters as they are.
    assert str(inspect.signature(AsyncThread.render_anthropic)).startswith("(self, *, context_mode")


def test_no_event_loop_and_no_thread_but_the_stderr_drain() -> None:
    before = set(threading.enumerate())
    with ThreadKeeper.spawn(binary=BINARY, args=MEMORY_ARGS) as tk:
        thread = tk.open_thread()
        thread.append(sample_events())
        assert thread.render_xml(incremental=True) == thread.render_xml()
        started = set(threading.enumerate()) - before
        assert [t.name for t in started] == ["threadkeeper-stderr"]
        with pytest.raises(RuntimeError):
            asyncio.get_running_loop()
    for t in started:
        t.join(timeout=5)
        assert not t.is_alive()


@pytest.mark.usefixtures("either_reader")
def test_incremental_renders_from_many_threads_share_the_kept_lines() -> None:
    with ThreadKeeper.spawn(binary=BINARY, args=MEMORY_ARGS) as tk:
        thread = tk.open_thread()
        events = loop_events(400)
        failures: list[BaseException] = []

        def work(n: int) -> None:
            try:
                for i in range(10):
                    thread.append(events[(n * 10 + i) * 4 : (n * 10 + i) * 4 + 4])
                    assert thread.render_xml(incremental=True).startswith("<thread>\n")
            except BaseException as error:  # reported below
                failures.append(error)

        workers = [threading.Thread(target=work, args=(n,)) for n in range(10)]
        for w in workers:
            w.start()
        for w in workers:
            w.join()
        assert failures == []
        assert thread.render_xml(incremental=True) == thread.render_xml()


@pytest.mark.usefixtures("either_reader")
def test_killing_the_server_fails_every_waiting_call_from_every_thread() -> None:
    tk = ThreadKeeper.spawn(binary=BINARY, args=MEMORY_ARGS)
    thread = tk.open_thread()
    thread.append(loop_events(2000))
    os.kill(tk.pid, signal.SIGSTOP)  # so the calls below wait
    outcomes: list[BaseException | object] = []
    calls = [thread.render_xml, lambda: tk.escape_xml("x"), thread.events, tk.list_threads]
    workers = [threading.Thread(target=lambda c=c: outcomes.append(_outcome(c))) for c in calls]
    for w in workers:
        w.start()
    os.kill(tk.pid, signal.SIGKILL)
    for w in workers:
        w.join(timeout=10)
        assert not w.is_alive()
    assert len(outcomes) == len(calls)
    for outcome in outcomes:
        assert isinstance(outcome, ServerExitedError), repr(outcome)
        assert outcome.exit_code == -signal.SIGKILL
        assert "killed by signal 9" in outcome.message
    with pytest.raises(ServerExitedError):
        tk.escape_xml("after")
    assert tk.wait_closed() == -signal.SIGKILL
    assert tk.close() == -signal.SIGKILL


def _outcome(call: object) -> BaseException | object:
    try:
        return call()  # type: ignore[operator]
    except BaseException as error:  # the outcome under test
        return error


@pytest.mark.usefixtures("either_reader")
def test_a_crash_reports_status_and_stderr_tail(tmp_path: Path) -> None:
    script = tmp_path / "crashing-server"
    script.write_text(f"#!{sys.executable}\n{CRASHING_SERVER}")
    script.chmod(0o755)
    tk = ThreadKeeper.spawn(binary=script)
    with pytest.raises(ServerExitedError) as info:
        tk.escape_xml("x")
    error = info.value
    assert error.exit_code == 101
    assert error.stderr.endswith("panicked at src/render.rs:12: boom")
    assert len(error.stderr.encode()) <= 8 * 1024, "only the tail is kept"
    assert "exited with status 101" in error.message
    assert tk.close() == 101


CHATTY_SERVER = r"""
import json, sys
sys.path.insert(0, sys.argv[1])
from threadkeeper._framing import FrameDecoder, encode
decoder = FrameDecoder()
while chunk := sys.stdin.buffer.read1(65536):
    for body in decoder.feed(chunk):
        message = json.loads(body)
        if "id" not in message:
            continue
        sys.stderr.write("log line\n" * 40000); sys.stderr.flush()  # far more than a pipe holds
        result = {"serverInfo": {"name": "chatty"}, "protocolVersion": 1, "capabilities": {}} if message["method"] == "initialize" else None
        sys.stdout.buffer.write(encode({"jsonrpc": "2.0", "id": message["id"], "result": result})); sys.stdout.flush()
"""


def test_a_server_writing_much_to_stderr_is_not_blocked(tmp_path: Path) -> None:
    script = tmp_path / "chatty.py"
    script.write_text(CHATTY_SERVER)
    with ThreadKeeper.spawn(binary=sys.executable, args=[str(script), str(Path(__file__).resolve().parent.parent / "src")], timeout=30) as tk:
        assert tk.request("test/anything") is None
        assert tk.request("test/again") is None


def test_a_frame_over_the_limit_is_refused_and_the_connection_goes_on() -> None:
    with ThreadKeeper.spawn(binary=BINARY, args=[*MEMORY_ARGS, "--max-frame-bytes", "100000"], timeout=5) as tk:
        thread = tk.open_thread("big")
        with pytest.raises(ThreadKeeperError) as info:
            thread.append(loop_events(2000))
        assert info.value.code == ErrorCode.LIMIT_EXCEEDED
        assert tk.escape_xml("<") == "&lt;"


@pytest.mark.usefixtures("either_reader")
def test_a_5mb_string_round_trips_both_ways() -> None:
    with ThreadKeeper.spawn(binary=BINARY, args=MEMORY_ARGS) as tk:
        big = "é<&>" * 1_250_000
        assert tk.escape_xml(big) == "é&lt;&amp;&gt;" * 1_250_000


def test_calls_after_close_fail_and_close_twice_is_fine() -> None:
    tk = ThreadKeeper.spawn(binary=BINARY, args=MEMORY_ARGS)
    assert tk.close() == 0
    assert tk.close() == 0
    assert tk.returncode == 0
    with pytest.raises(ServerExitedError, match="closed"):
        tk.open_thread()


def test_async_adapters_of_a_blocking_thread_leave_the_callers_loop_free() -> None:
    with ThreadKeeper.spawn(binary=BINARY, args=MEMORY_ARGS) as tk:
        thread = tk.open_thread()
        thread.append(sample_events())

        async def main() -> list[int]:
            from threadkeeper.sync import run_from_loop

            ticks: list[int] = []

            async def tick() -> None:
                for i in range(3):
                    ticks.append(i)
                    await asyncio.sleep(0)

            events, _ = await asyncio.gather(run_from_loop(thread._async.events()), tick())
            assert events == sample_events()
            return ticks

        assert asyncio.run(main()) == [0, 1, 2]


@pytest.fixture
def ctrl_c_raises() -> Iterator[None]:
    """SIGINT raising KeyboardInterrupt, as Python sets it up only when SIGINT was not ignored
    at start: under ``nohup`` or in a shell's background job it is ignored, and a test counting
    on the inherited disposition would wait for a signal that never comes."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


@pytest.mark.usefixtures("either_reader", "ctrl_c_raises")
def test_ctrl_c_during_a_call_cancels_it_on_the_server() -> None:
    import math

    from test_spawn_and_timeouts import FAKE

    with ThreadKeeper.spawn(binary=sys.executable, args=FAKE) as tk:
        main = threading.get_ident()
        # Sent to this thread once it waits in the read (the fake server never answers test/hang).
        interrupter = threading.Timer(0.2, signal.pthread_kill, args=(main, signal.SIGINT))
        interrupter.start()
        # The timeout only bounds the test: a lost signal fails it with RequestTimeoutError.
        with pytest.raises(KeyboardInterrupt):
            tk.request("test/hang", timeout=30)
        interrupter.join()
        assert tk.request("test/cancelled", timeout=math.inf) == [2]
        assert tk.request("test/cancelled") == [2], "the connection goes on"


@pytest.mark.usefixtures("either_reader")
def test_timeouts_from_many_threads_cancel_each_call_and_the_rest_are_answered() -> None:
    import math

    from test_spawn_and_timeouts import FAKE

    with ThreadKeeper.spawn(binary=sys.executable, args=FAKE) as tk:
        outcomes: list[str] = []

        def hang() -> None:
            try:
                tk.request("test/hang", timeout=0.05)
            except RequestTimeoutError:
                outcomes.append("timeout")

        def answered() -> None:
            outcomes.append("answered" if tk.request("initialize", {}, timeout=math.inf)["serverInfo"] else "?")

        workers = [threading.Thread(target=hang if n % 2 else answered) for n in range(8)]
        for w in workers:
            w.start()
        for w in workers:
            w.join()
        assert sorted(outcomes) == ["answered"] * 4 + ["timeout"] * 4
        assert len(tk.request("test/cancelled", timeout=math.inf)) == 4
