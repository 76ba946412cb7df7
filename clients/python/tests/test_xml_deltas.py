"""XML deltas: ``render_xml_delta`` and ``render_xml(incremental=True)``."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from conftest import BINARY, MEMORY_ARGS, SAMPLE_XML, loop_events, sample_events

from threadkeeper import AsyncThreadKeeper, ErrorCode, ThreadKeeper, ThreadKeeperError, XmlDelta

#: The event lines of SAMPLE_XML, each with its newline.
SAMPLE_LINES = [line + "\n" for line in SAMPLE_XML.split("\n")[1:-1]]


@contextmanager
def recorded_renders(tk: AsyncThreadKeeper) -> Iterator[list[dict[str, Any]]]:
    """The params of every ``thread/render`` the client sends inside the block."""
    params: list[dict[str, Any]] = []
    original = tk.request

    async def spy(method: str, p: Any = None, *, timeout: float | None = None) -> Any:
        if method == "thread/render":
            params.append(p)
        return await original(method, p, timeout=timeout)

    tk.request = spy  # type: ignore[method-assign]
    try:
        yield params
    finally:
        del tk.request


async def test_delta_holds_the_lines_from_from_event_on_and_the_tail(tk: AsyncThreadKeeper) -> None:
    thread = await tk.open_thread(settings={"responsePrefix": "Go:"})
    await thread.append(sample_events())
    assert await thread.render_xml_delta(0) == XmlDelta(1, 5, 0, "".join(SAMPLE_LINES), "</thread>\nGo:")
    assert await thread.render_xml_delta(3, response_prefix="") == XmlDelta(1, 5, 3, "".join(SAMPLE_LINES[3:]), "</thread>")
    none = await thread.render_xml_delta(5)
    assert none.lines == ""
    assert "<thread>\n" + "".join(SAMPLE_LINES) + none.tail == await thread.render_xml()
    minimal = await thread.render_xml_delta(1, escape="minimal")
    assert minimal.lines.split("\n")[0] == '  <event type="tool_input" id="1" name="calculator" iteration="1">{"expression":"2+2"}</event>'
    assert await thread.render("xml", from_event=4) == {
        "format": "xml",
        "version": 1,
        "eventCount": 5,
        "fromEvent": 4,
        "lines": SAMPLE_LINES[4],
        "tail": "</thread>\nGo:",
    }


async def test_from_event_past_the_end_is_invalid_params(tk: AsyncThreadKeeper) -> None:
    thread = await tk.open_thread()
    await thread.append(sample_events())
    with pytest.raises(ThreadKeeperError) as info:
        await thread.render_xml_delta(6)
    assert info.value.code == ErrorCode.INVALID_PARAMS
    assert info.value.data["path"] == "options.fromEvent"


async def test_empty_thread(tk: AsyncThreadKeeper) -> None:
    thread = await tk.open_thread()
    assert await thread.render_xml_delta(0) == XmlDelta(0, 0, 0, "", "</thread>")
    assert await thread.render_xml(incremental=True) == "<thread>\n</thread>"


async def test_incremental_equals_full_at_every_step_of_a_200_step_loop(tk: AsyncThreadKeeper) -> None:
    thread = await tk.open_thread(settings={"responsePrefix": "Next:"})
    events = loop_events(1000)
    sent = 0
    for step in range(200):
        n = (step * 7) % 9  # 0 to 8 events per step: some steps append nothing
        if n:
            await thread.append(events[sent : sent + n])
        sent += n
        escape: Any = "minimal" if step % 3 == 2 else "full"
        prefix = "" if step % 5 == 4 else None
        incremental = await thread.render_xml(incremental=True, escape=escape, response_prefix=prefix)
        full = await thread.render_xml(escape=escape, response_prefix=prefix)
        assert incremental == full, f"step {step} ({sent} events, escape {escape})"
    assert sent > 700


async def test_incremental_asks_only_for_new_events_per_escape_mode(tk: AsyncThreadKeeper) -> None:
    thread = await tk.open_thread()
    with recorded_renders(tk) as params:
        await thread.append(loop_events(4))
        await thread.render_xml(incremental=True)
        await thread.append(loop_events(4, 4))
        await thread.render_xml(incremental=True)
        await thread.render_xml(incremental=True, escape="minimal")
        await thread.render_xml(incremental=True)
    assert [p["options"] for p in params] == [{"fromEvent": 0}, {"fromEvent": 4}, {"escape": "minimal", "fromEvent": 0}, {"fromEvent": 8}]


async def test_renders_started_together_extend_the_kept_lines_once(tk: AsyncThreadKeeper) -> None:
    thread = await tk.open_thread()
    await thread.append(loop_events(6))
    doc6 = await tk.serialize_thread_to_xml(loop_events(6))
    doc12 = await tk.serialize_thread_to_xml(loop_events(12))
    together = await asyncio.gather(thread.render_xml(incremental=True), thread.render_xml(incremental=True), thread.render_xml(incremental=True, escape="minimal"))
    assert together == [doc6, doc6, await tk.serialize_thread_to_xml(loop_events(6), escape="minimal")]
    # An append sent while a render waits: that render sees it or not, the next one surely does.
    first, _, second = await asyncio.gather(thread.render_xml(incremental=True), thread.append(loop_events(6, 6)), thread.render_xml(incremental=True))
    assert first in (doc6, doc12)
    assert second == doc12
    assert await thread.render_xml(incremental=True) == doc12


async def test_thread_recreated_with_fewer_events_starts_over(tk: AsyncThreadKeeper) -> None:
    thread = await tk.open_thread("recreated-fewer")
    await thread.append(loop_events(8))
    await thread.render_xml(incremental=True)
    await tk.delete_thread(thread.id)  # deleted and recreated behind this object's back
    again = await tk.open_thread(thread.id)
    fresh = sample_events()[:3]
    await again.append(fresh)
    with recorded_renders(tk) as params:
        assert await thread.render_xml(incremental=True) == await tk.serialize_thread_to_xml(fresh)
    assert [p["options"] for p in params] == [{"fromEvent": 8}, {"fromEvent": 0}]
    await again.append(sample_events()[3:])
    assert await thread.render_xml(incremental=True) == SAMPLE_XML


async def test_thread_recreated_at_a_lower_version_starts_over(tk: AsyncThreadKeeper) -> None:
    thread = await tk.open_thread("recreated-lower-version")
    for i in range(3):
        await thread.append(loop_events(1, i))
    await thread.render_xml(incremental=True)
    await tk.delete_thread(thread.id)
    again = await tk.open_thread(thread.id)
    await again.append(sample_events())  # version 1, 5 events: fromEvent 3 is accepted
    assert await thread.render_xml(incremental=True) == SAMPLE_XML


async def test_delete_forgets_the_kept_lines_and_other_errors_pass_through(tk: AsyncThreadKeeper) -> None:
    thread = await tk.open_thread("deleted-then-reopened")
    await thread.append(loop_events(8))
    await thread.render_xml(incremental=True)
    await thread.delete()
    with pytest.raises(ThreadKeeperError) as info:
        await thread.render_xml(incremental=True)
    assert info.value.code == ErrorCode.THREAD_NOT_FOUND
    await tk.open_thread(thread.id)
    await thread.append(sample_events())
    assert await thread.render_xml(incremental=True) == SAMPLE_XML
    with pytest.raises(ThreadKeeperError) as info:
        await thread.render_xml(incremental=True, escape="none")  # type: ignore[arg-type]
    assert info.value.code == ErrorCode.INVALID_PARAMS


def test_blocking_facade() -> None:
    with ThreadKeeper.spawn(binary=BINARY, args=MEMORY_ARGS) as tk:
        thread = tk.open_thread(settings={"responsePrefix": "Go:"})
        for i in range(0, 40, 4):
            thread.append(loop_events(4, i))
            assert thread.render_xml(incremental=True) == thread.render_xml()
        all_lines = thread.render_xml_delta(0).lines.splitlines(keepends=True)
        assert len(all_lines) == 40
        assert thread.render_xml_delta(38) == XmlDelta(10, 40, 38, "".join(all_lines[38:]), "</thread>\nGo:")
