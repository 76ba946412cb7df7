from __future__ import annotations

import asyncio
import os
import signal
import sys
import time
from pathlib import Path

import pytest
from bench.reference_serializer import serialize_thread_to_xml as reference_xml
from conftest import freeze, loop_events, spawn_memory

from threadkeeper import AsyncThreadKeeper, ErrorCode, ServerExitedError, ThreadKeeperError


async def test_500_calls_in_flight_each_get_their_own_answer(tk: AsyncThreadKeeper) -> None:
    threads = [await tk.open_thread(f"conc-{i}") for i in range(4)]

    async def escape(i: int) -> None:
        assert await tk.escape_xml(f'<{i}> & "{"x" * i}"') == f'&lt;{i}&gt; &amp; &quot;{"x" * i}&quot;'

    async def append(i: int) -> None:
        thread = threads[i % 4]
        result = await thread.append([{"type": "message", "role": "user", "content": f"m{i}", "iteration": i}])
        assert result.thread_id == thread.id

    await asyncio.gather(*(append(i) if i % 5 == 0 else escape(i) for i in range(500)))
    for n, thread in enumerate(threads):
        sent = [f"m{i}" for i in range(500) if i % 5 == 0 and i % 4 == n]
        assert [e["content"] for e in await thread.events()] == sent, "appends to one thread keep their order"
        assert (await thread.events_page()).version == len(sent)


async def test_concurrent_expected_version_appends_one_wins(tk: AsyncThreadKeeper) -> None:
    thread = await tk.open_thread()
    results = await asyncio.gather(
        *(thread.append([{"type": "message", "role": "user", "content": str(i), "iteration": 0}], expected_version=0) for i in range(10)),
        return_exceptions=True,
    )
    assert sum(not isinstance(r, BaseException) for r in results) == 1
    assert all(r.code == ErrorCode.VERSION_CONFLICT for r in results if isinstance(r, ThreadKeeperError))


async def test_killing_the_server_mid_call_fails_every_pending_call_at_once() -> None:
    tk = await spawn_memory()
    thread = await tk.open_thread()
    await thread.append(loop_events(2000))
    await freeze(tk.pid)  # so the calls below are surely in flight
    calls = [
        asyncio.ensure_future(c)
        for c in (thread.render_xml(), tk.escape_xml("x"), thread.append(loop_events(4)), tk.list_threads(), thread.events())
    ]
    await asyncio.sleep(0.05)
    assert not any(c.done() for c in calls)
    killed_at = time.monotonic()
    os.kill(tk.pid, signal.SIGKILL)
    results = await asyncio.wait_for(asyncio.gather(*calls, return_exceptions=True), 5)
    assert time.monotonic() - killed_at < 2.5
    for result in results:
        assert isinstance(result, ServerExitedError), repr(result)
        assert result.exit_code == -signal.SIGKILL
        assert "killed by signal 9" in result.message
    with pytest.raises(ServerExitedError):
        await tk.escape_xml("after")
    assert await tk.wait_closed() == -signal.SIGKILL
    assert await tk.close() == -signal.SIGKILL


CRASHING_SERVER = r'''
import json, sys
out, inp = sys.stdout.buffer, sys.stdin.buffer
def read():
    length = None
    while True:
        line = inp.readline()
        if not line:
            sys.exit(0)
        if line == b"\r\n":
            break
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value)
    return json.loads(inp.read(length))
msg = read()
body = json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": {"serverInfo": {"name": "threadkeeper", "version": "0"}, "protocolVersion": 1, "capabilities": {"renderFormats": [], "store": {"kind": "memory"}}}}).encode()
out.write(b"Content-Length: %d\r\n\r\n" % len(body) + body); out.flush()
read()
sys.stderr.write("x" * 20000 + "\npanicked at src/render.rs:12: boom\n"); sys.stderr.flush()
sys.exit(101)
'''


async def test_a_crash_reports_status_and_stderr_tail(tmp_path: Path) -> None:
    script = tmp_path / "crashing-server"
    script.write_text(f"#!{sys.executable}\n{CRASHING_SERVER}")
    script.chmod(0o755)
    tk = await AsyncThreadKeeper.spawn(binary=script)
    with pytest.raises(ServerExitedError) as info:
        await tk.escape_xml("x")
    error = info.value
    assert error.code == ErrorCode.SERVER_EXITED
    assert error.exit_code == 101
    assert error.stderr.endswith("panicked at src/render.rs:12: boom")
    assert len(error.stderr.encode()) <= 8 * 1024, "only the tail is kept"
    assert "exited with status 101" in error.message and "boom" in error.message


async def test_cancelling_a_call_leaves_the_connection_usable(tk: AsyncThreadKeeper) -> None:
    thread = await tk.open_thread()
    await thread.append(loop_events(4000))
    task = asyncio.ensure_future(thread.render_xml())
    await asyncio.sleep(0)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert await tk.escape_xml("<") == "&lt;"
    assert (await thread.events_page()).event_count == 4000


async def test_10k_events(tk: AsyncThreadKeeper) -> None:
    events = loop_events(10_000)
    thread = await tk.open_thread(settings={"responsePrefix": "Next step:"})
    result = await thread.append(events)
    assert (result.version, result.event_count) == (1, 10_000)
    assert await thread.render_xml() == reference_xml(events, "Next step:")
    assert await thread.events() == events
    assert await thread.events(offset=9_990, limit=5) == events[9_990:9_995]
    more = loop_events(8, 10_000)
    await thread.append(more)
    assert await thread.render_xml(response_prefix="") == reference_xml(events + more)


async def test_a_5mb_string_round_trips(tk: AsyncThreadKeeper) -> None:
    big = "é<&>" * 1_250_000
    assert await tk.escape_xml(big) == "é&lt;&amp;&gt;" * 1_250_000


async def test_a_frame_over_the_limit_is_refused_and_the_connection_goes_on() -> None:
    async with await spawn_memory("--max-frame-bytes", "100000") as tk:
        thread = await tk.open_thread("big")
        with pytest.raises(ThreadKeeperError) as info:
            await asyncio.wait_for(thread.append(loop_events(2000)), 5)
        assert info.value.code == ErrorCode.LIMIT_EXCEEDED
        assert info.value.data["limit"] == "maxFrameBytes"
        assert await tk.escape_xml("<") == "&lt;"
