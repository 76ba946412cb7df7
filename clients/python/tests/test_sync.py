"""The blocking client: same methods, same errors, usable from plain code."""

from __future__ import annotations

import threading

import pytest
from conftest import BINARY, MEMORY_ARGS, SAMPLE_XML, sample_events

from threadkeeper import AppendResult, ErrorCode, ServerExitedError, ThreadKeeper, ThreadKeeperError


def test_with_block_round_trip() -> None:
    with ThreadKeeper.spawn(binary=BINARY, args=MEMORY_ARGS) as tk:
        assert tk.server["serverInfo"]["name"] == "threadkeeper"
        thread = tk.open_thread("sync-1", settings={"responsePrefix": "Go:"}, metadata={"a": 1})
        assert thread.info.metadata == {"a": 1}
        assert thread.append(sample_events()) == AppendResult("sync-1", 1, 5)
        assert thread.render_xml() == SAMPLE_XML + "\nGo:"
        assert thread.render_xml(response_prefix="") == SAMPLE_XML
        assert thread.events() == sample_events()
        assert thread.events_page(offset=4).events == sample_events()[4:]
        assert tk.serialize_thread_to_xml(sample_events()) == SAMPLE_XML
        assert tk.escape_xml("<&>") == "&lt;&amp;&gt;"
        assert [t.thread_id for t in tk.list_threads()] == ["sync-1"]
        thread.close()
        assert tk.list_threads() == []
        assert tk.delete_thread("sync-1") is False
    assert tk.close() == 0
    with pytest.raises(ServerExitedError):
        tk.escape_xml("x")


def test_errors_propagate() -> None:
    with ThreadKeeper.spawn(binary=BINARY, args=MEMORY_ARGS) as tk:
        thread = tk.open_thread()
        thread.append(sample_events()[:1])
        with pytest.raises(ThreadKeeperError) as info:
            thread.append(sample_events(), expected_version=0)
        assert info.value.code == ErrorCode.VERSION_CONFLICT
        assert info.value.data == {"threadId": thread.id, "currentVersion": 1}


def test_usable_from_many_threads() -> None:
    with ThreadKeeper.spawn(binary=BINARY, args=MEMORY_ARGS) as tk:
        failures: list[BaseException] = []

        def work(n: int) -> None:
            try:
                for i in range(50):
                    assert tk.escape_xml(f"<{n}-{i}>") == f"&lt;{n}-{i}&gt;"
            except BaseException as error:  # reported below
                failures.append(error)

        workers = [threading.Thread(target=work, args=(n,)) for n in range(8)]
        for w in workers:
            w.start()
        for w in workers:
            w.join()
        assert failures == []


def test_spawn_failure_leaves_no_loop_thread_behind() -> None:
    before = {t.name for t in threading.enumerate()}
    with pytest.raises(ServerExitedError):
        ThreadKeeper.spawn(binary=BINARY, args=["--no-such-flag"])
    # asyncio's own waitpid thread ends just after reporting the exit: give new threads a moment.
    for thread in threading.enumerate():
        if thread.name not in before:
            thread.join(timeout=2)
    assert {t.name for t in threading.enumerate()} - before == set()


def test_callable_from_inside_a_running_event_loop() -> None:
    import asyncio

    with ThreadKeeper.spawn(binary=BINARY, args=MEMORY_ARGS) as tk:

        async def inside() -> str:
            return tk.escape_xml("<")  # blocks this loop, but works: a helper thread drives the client's loop

        assert asyncio.run(inside()) == "&lt;"
        assert tk.escape_xml(">") == "&gt;"


def test_timeouts_from_many_threads_leave_the_others_answered() -> None:
    import math
    import sys
    from pathlib import Path

    from threadkeeper import RequestTimeoutError

    fake = [str(Path(__file__).with_name("fake_server.py")), str(Path(__file__).resolve().parent.parent / "src")]
    with ThreadKeeper.spawn(binary=sys.executable, args=fake) as tk:
        outcomes: list[str] = []

        def hang() -> None:
            try:
                tk.request("test/hang", timeout=0.05)
            except RequestTimeoutError:
                outcomes.append("timeout")

        workers = [threading.Thread(target=hang) for _ in range(6)]
        for w in workers:
            w.start()
        for w in workers:
            w.join()
        assert outcomes == ["timeout"] * 6
        assert sorted(tk.request("test/cancelled", timeout=math.inf)) == [2, 3, 4, 5, 6, 7]
