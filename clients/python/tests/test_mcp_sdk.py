"""``threadkeeper mcp`` driven by the official MCP Python SDK's client, as an agent host drives it:
stdio_client spawns the binary, ClientSession negotiates (the ``initialize`` handshake, and the
stateless ``server/discover`` revision), lists the tools and reads a thread in token-bounded pages.

Skipped when the ``mcp`` package (the ``test`` extra) or the binary is missing.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import pytest

mcp = pytest.importorskip("mcp")
from mcp import ClientSession, StdioServerParameters  # noqa: E402
from mcp.client.stdio import stdio_client  # noqa: E402

from threadkeeper import AsyncThreadKeeper  # noqa: E402

from conftest import BINARY  # noqa: E402

#: Every exchange is bounded: a hung server fails the test instead of hanging it.
TIMEOUT = 60.0
EVENTS = 1200

pytestmark = pytest.mark.skipif(not BINARY or not os.path.exists(BINARY), reason="threadkeeper binary not built")


async def write_thread(store: str) -> None:
    """A long thread in a SQLite file, written through the protocol server."""
    writer = await AsyncThreadKeeper.spawn(binary=BINARY, args=["--store", store], client_info={"name": "mcp-sdk-test"})
    try:
        thread = await writer.open_thread("long")
        events = [{"type": "message", "role": "user" if i % 2 == 0 else "assistant", "content": f"turn {i}: " + "words " * 20, "iteration": i // 2} for i in range(EVENTS)]
        await thread.append(events)
    finally:
        await writer.close()


def server_parameters(store: str) -> StdioServerParameters:
    return StdioServerParameters(command=BINARY, args=["mcp", "--store", store], env={"RUST_LOG": "warn"})


async def read_all_pages(session: ClientSession, max_tokens: int) -> tuple[list[int], int]:
    """Follows nextEvent to the end; returns the event indexes seen and the number of pages."""
    seen: list[int] = []
    from_event, pages = 0, 0
    while True:
        result = await asyncio.wait_for(
            session.call_tool("read_thread", {"threadId": "long", "fromEvent": from_event, "maxTokens": max_tokens}), TIMEOUT
        )
        assert not result.is_error, result
        page: dict[str, Any] = result.structured_content or {}
        assert page["tokens"] <= max_tokens
        assert page["eventCount"] == EVENTS
        seen += [int(line[1 : line.index(" ")]) for line in page["text"].splitlines() if line.startswith("#")]
        pages += 1
        if "nextEvent" not in page:
            return seen, pages
        assert page["nextEvent"] > from_event
        from_event = page["nextEvent"]


async def test_the_official_client_lists_tools_and_reads_a_thread_in_pages(tmp_path: Path) -> None:
    store = f"sqlite:{tmp_path / 'threads.db'}"
    await write_thread(store)
    async with stdio_client(server_parameters(store)) as (read, write):
        async with ClientSession(read, write) as session:
            init = await asyncio.wait_for(session.initialize(), TIMEOUT)
            assert init.server_info.name == "threadkeeper"
            tools = await asyncio.wait_for(session.list_tools(), TIMEOUT)
            names = {tool.name for tool in tools.tools}
            assert names == {"list_threads", "read_thread", "get_event", "search_threads"}
            assert all(tool.output_schema for tool in tools.tools)
            listed = await asyncio.wait_for(session.call_tool("list_threads", {}), TIMEOUT)
            assert [t["threadId"] for t in (listed.structured_content or {})["threads"]] == ["long"]
            seen, pages = await read_all_pages(session, 1000)
            assert seen == list(range(EVENTS))
            assert pages > 5
            missing = await asyncio.wait_for(session.call_tool("read_thread", {"threadId": "nope"}), TIMEOUT)
            assert missing.is_error


async def test_the_official_client_speaks_the_stateless_revision(tmp_path: Path) -> None:
    if not hasattr(ClientSession, "discover"):
        pytest.skip("this mcp SDK predates server/discover")
    store = f"sqlite:{tmp_path / 'threads.db'}"
    await write_thread(store)
    async with stdio_client(server_parameters(store)) as (read, write):
        async with ClientSession(read, write) as session:
            discovered = await asyncio.wait_for(session.discover(), TIMEOUT)
            assert "2026-07-28" in discovered.supported_versions
            page = await asyncio.wait_for(session.call_tool("read_thread", {"threadId": "long", "maxTokens": 500}), TIMEOUT)
            assert not page.is_error and (page.structured_content or {})["tokens"] <= 500
