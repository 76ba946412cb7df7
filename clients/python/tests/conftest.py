from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from threadkeeper import AsyncThreadKeeper, ErrorCode, ThreadKeeper, ThreadKeeperError, find_binary

PACKAGE_DIR = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(PACKAGE_DIR))  # for bench.reference_serializer

#: The binary under test: THREADKEEPER_BIN, else the usual discovery.
BINARY = find_binary()
#: Tests pass the store explicitly: the server's default store may change.
MEMORY_ARGS = ["--store", "memory"]


def repo_root() -> Path:
    for directory in [PACKAGE_DIR, *PACKAGE_DIR.parents]:
        if (directory / "Cargo.toml").is_file():
            return directory
    raise RuntimeError("not inside the threadkeeper repository")


async def spawn_memory(*extra: str) -> AsyncThreadKeeper:
    return await AsyncThreadKeeper.spawn(binary=BINARY, args=[*MEMORY_ARGS, *extra], client_info={"name": "threadkeeper-py-tests"})


@pytest.fixture
async def tk() -> AsyncIterator[AsyncThreadKeeper]:
    client = await spawn_memory()
    try:
        yield client
    finally:
        await client.close()


def sample_events() -> list[dict[str, Any]]:
    """The seed's example thread."""
    return [
        {"type": "message", "role": "user", "content": "What is 2+2?", "iteration": 0, "timestamp": 1700000000000},
        {"type": "tool_call", "toolName": "calculator", "toolCallId": "c1", "args": {"expression": "2+2"}, "iteration": 1, "timestamp": 1700000000001},
        {"type": "tool_result", "toolCallId": "c1", "result": "4", "iteration": 1, "timestamp": 1700000000002},
        {"type": "message", "role": "assistant", "content": "The answer is 4.", "iteration": 1, "timestamp": 1700000000003},
        {"type": "completion", "result": "The answer is 4.", "verified": True, "iteration": 1, "timestamp": 1700000000004},
    ]


#: The seed-000 document of ``sample_events()``, written out by hand.
SAMPLE_XML = "\n".join(
    [
        "<thread>",
        '  <event type="human" id="0" iteration="0">What is 2+2?</event>',
        '  <event type="tool_input" id="1" name="calculator" iteration="1">{&quot;expression&quot;:&quot;2+2&quot;}</event>',
        '  <event type="tool_output" id="2" name="calculator" status="success" iteration="1">4</event>',
        '  <event type="ai" id="3" iteration="1">The answer is 4.</event>',
        '  <event type="completion" id="4" iteration="1">The answer is 4.</event>',
        "</thread>",
    ]
)


def loop_events(n: int, start: int = 0) -> list[dict[str, Any]]:
    """``n`` events of an agent loop: user turn, tool call, tool result, assistant reply, repeated."""
    events: list[dict[str, Any]] = []
    for i in range(start, start + n):
        step = i // 4
        call_id = f"call_{step}"
        ts = 1700000000000 + i
        if i % 4 == 0:
            events.append({"type": "message", "role": "user", "content": f'Step {step}: what is {step} * 3 & "why"?', "iteration": step, "timestamp": ts})
        elif i % 4 == 1:
            events.append({"type": "tool_call", "toolName": "calculator", "toolCallId": call_id, "args": {"expression": f"{step} * 3", "precise": True}, "iteration": step, "timestamp": ts})
        elif i % 4 == 2:
            events.append({"type": "tool_result", "toolCallId": call_id, "result": {"value": step * 3, "unit": None}, "iteration": step, "timestamp": ts})
        else:
            events.append({"type": "message", "role": "assistant", "content": f"It is <b>{step * 3}</b>.", "iteration": step, "timestamp": ts})
    return events


def assert_subset(actual: Any, expected: Any, path: str = "$") -> None:
    """Every field of ``expected`` is in ``actual`` with an equal value (extra fields allowed)."""
    if isinstance(expected, dict):
        assert isinstance(actual, dict), f"{path}: expected an object, got {actual!r}"
        for key, value in expected.items():
            assert key in actual, f"{path}.{key}: missing in {actual!r}"
            assert_subset(actual[key], value, f"{path}.{key}")
    elif isinstance(expected, list):
        assert isinstance(actual, list) and len(actual) == len(expected), f"{path}: expected {len(expected)} items, got {actual!r}"
        for i, item in enumerate(expected):
            assert_subset(actual[i], item, f"{path}[{i}]")
    else:
        assert actual == expected, f"{path}: expected {expected!r}, got {actual!r}"


async def skip_unless_server_has(tk: AsyncThreadKeeper, *methods: str) -> None:
    """Skips a test of methods this server build does not have yet (-32601); any other answer,
    -32602 for the empty params included, means the method is there."""
    for method in methods:
        try:
            await tk.request(method, {})
        except ThreadKeeperError as error:
            if error.code == ErrorCode.METHOD_NOT_FOUND:
                pytest.skip(f"the server under test has no {method}")


def skip_unless_blocking_server_has(tk: ThreadKeeper, *methods: str) -> None:
    """:func:`skip_unless_server_has` for the blocking client."""
    for method in methods:
        try:
            tk.request(method, {})
        except ThreadKeeperError as error:
            if error.code == ErrorCode.METHOD_NOT_FOUND:
                pytest.skip(f"the server under test has no {method}")


async def freeze(pid: int) -> None:
    """Stops the server and waits until the kernel says it is stopped: ``kill`` only queues
    SIGSTOP, and a server running on the other core could still answer a request sent at once."""
    import asyncio
    import os
    import signal

    os.kill(pid, signal.SIGSTOP)
    for _ in range(400):
        stat = Path(f"/proc/{pid}/stat").read_text()
        if stat[stat.rindex(")") + 2 :].startswith("T"):
            return
        await asyncio.sleep(0.005)
    raise AssertionError(f"process {pid} did not stop")
