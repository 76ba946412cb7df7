"""``spawn`` as an async context manager, and call timeouts in both clients."""

from __future__ import annotations

import asyncio
import math
import sys
from pathlib import Path

import pytest
from conftest import BINARY, MEMORY_ARGS, sample_events

from threadkeeper import AsyncThreadKeeper, ErrorCode, RequestTimeoutError, ServerExitedError, ThreadKeeper, ThreadKeeperError

TESTS = Path(__file__).resolve().parent
#: A server that never answers ``test/hang`` and reports the cancellations it read.
FAKE = [str(TESTS / "fake_server.py"), str(TESTS.parent / "src")]


async def test_spawn_is_an_async_context_manager_without_await() -> None:
    async with AsyncThreadKeeper.spawn(binary=BINARY, args=MEMORY_ARGS) as tk:
        assert isinstance(tk, AsyncThreadKeeper)
        thread = await tk.open_thread()
        await thread.append(sample_events())
        assert len(await thread.events()) == 5
    assert tk.returncode == 0
    with pytest.raises(ServerExitedError):
        await tk.escape_xml("x")


async def test_awaiting_spawn_still_gives_the_client() -> None:
    tk = await AsyncThreadKeeper.spawn(binary=BINARY, args=MEMORY_ARGS)
    assert await tk.escape_xml("<") == "&lt;"
    async with await AsyncThreadKeeper.spawn(binary=BINARY, args=MEMORY_ARGS) as other:
        assert await other.escape_xml("&") == "&amp;"
    assert await tk.close() == 0


async def test_spawn_that_is_never_awaited_starts_nothing() -> None:
    spawning = AsyncThreadKeeper.spawn(binary=BINARY, args=MEMORY_ARGS)
    del spawning  # no process, and no "coroutine was never awaited" warning


async def test_async_timeout_raises_and_cancels_on_the_server() -> None:
    async with AsyncThreadKeeper.spawn(binary=sys.executable, args=FAKE, timeout=0.05) as tk:
        with pytest.raises(RequestTimeoutError) as info:
            await tk.request("test/hang")
        error = info.value
        assert isinstance(error, ThreadKeeperError) and isinstance(error, TimeoutError)
        assert (error.code, error.method, error.timeout) == (ErrorCode.TIMEOUT, "test/hang", 0.05)
        assert error.data == {"method": "test/hang", "timeout": 0.05}
        # Ids count from 1: initialize was 1, the hung call 2.
        assert await tk.request("test/cancelled", timeout=math.inf) == [2]


async def test_per_call_timeout_overrides_the_default() -> None:
    async with AsyncThreadKeeper.spawn(binary=sys.executable, args=FAKE) as tk:
        assert tk.timeout is None
        with pytest.raises(RequestTimeoutError):
            await tk.request("test/hang", timeout=0.01)
        tk.timeout = 0.01
        with pytest.raises(RequestTimeoutError):
            await tk.request("test/hang")
        hung = asyncio.create_task(tk.request("test/hang", timeout=math.inf))
        assert await tk.request("test/cancelled", timeout=5) == [2, 3]
        assert not hung.done()
        hung.cancel()


async def test_answered_calls_are_untouched_by_their_timeout(tk: AsyncThreadKeeper) -> None:
    thread = await tk.open_thread(timeout=30)
    await thread.append(sample_events(), timeout=30)
    assert len(await thread.events(timeout=30)) == 5
    assert await thread.render_xml(timeout=30, incremental=True) == await thread.render_xml(timeout=30)


def test_blocking_client_context_manager_and_timeout() -> None:
    with ThreadKeeper.spawn(binary=sys.executable, args=FAKE, timeout=0.05) as tk:
        assert tk.timeout == 0.05
        with pytest.raises(RequestTimeoutError):
            tk.request("test/hang")
        assert tk.request("test/cancelled", timeout=math.inf) == [2]
    assert tk.close() == 0


def test_blocking_client_typed_calls_take_a_timeout() -> None:
    with ThreadKeeper.spawn(binary=BINARY, args=MEMORY_ARGS, timeout=30) as tk:
        thread = tk.open_thread("t", timeout=30)
        thread.append(sample_events(), timeout=30)
        assert thread.render_messages(timeout=30)[0]["type"] == "human"
        assert tk.escape_xml("<", timeout=30) == "&lt;"


async def test_a_server_that_never_answers_initialize_fails_spawn_and_is_killed() -> None:
    silent = ["-c", "import sys; sys.stdin.read()"]
    with pytest.raises(RequestTimeoutError) as info:
        await AsyncThreadKeeper.spawn(binary=sys.executable, args=silent, start_timeout=0.2)
    assert info.value.method == "initialize"
    with pytest.raises(RequestTimeoutError):
        ThreadKeeper.spawn(binary=sys.executable, args=silent, start_timeout=0.2)
