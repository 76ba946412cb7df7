from __future__ import annotations

import re
from typing import Any

import pytest
from conftest import SAMPLE_XML, sample_events, spawn_memory

from threadkeeper import AppendResult, AsyncThreadKeeper, ErrorCode, EventsPage, ThreadKeeperError


async def raises_code(call: Any, code: int) -> ThreadKeeperError:
    with pytest.raises(ThreadKeeperError) as info:
        await call
    assert info.value.code == code, f"expected {code}, got {info.value!r}"
    return info.value


async def test_open_without_id_makes_a_new_thread(tk: AsyncThreadKeeper) -> None:
    thread = await tk.open_thread()
    assert re.fullmatch(r"[A-Za-z0-9._:-]{1,128}", thread.id)
    info = thread.info
    assert (info.thread_id, info.version, info.event_count, info.settings, info.metadata) == (thread.id, 0, 0, {}, {})
    assert isinstance(info.created_at, int) and info.updated_at >= info.created_at
    assert (await tk.open_thread()).id != thread.id


async def test_reopen_keeps_events_and_replaces_given_settings_and_metadata(tk: AsyncThreadKeeper) -> None:
    first = await tk.open_thread("reopen-1", settings={"contextMode": "xml", "responsePrefix": "Go:"}, metadata={"user": "ann"})
    assert first.info.settings == {"contextMode": "xml", "responsePrefix": "Go:"}
    await first.append(sample_events()[:1])
    again = await tk.open_thread("reopen-1", metadata={"user": "bob", "n": 2})
    assert (again.info.version, again.info.event_count) == (1, 1)
    assert again.info.settings == {"contextMode": "xml", "responsePrefix": "Go:"}
    assert again.info.metadata == {"user": "bob", "n": 2}
    replaced = await tk.open_thread("reopen-1", settings={"instructions": "Be brief."})
    assert replaced.info.settings == {"instructions": "Be brief."}


async def test_invalid_ids_and_settings(tk: AsyncThreadKeeper) -> None:
    await raises_code(tk.open_thread("has space"), ErrorCode.INVALID_PARAMS)
    await raises_code(tk.open_thread("x" * 129), ErrorCode.INVALID_PARAMS)
    error = await raises_code(tk.open_thread(settings={"contextMode": "json"}), ErrorCode.INVALID_PARAMS)  # type: ignore[typeddict-item]
    assert "contextMode" in str(error.data)


async def test_append_and_render_xml(tk: AsyncThreadKeeper) -> None:
    thread = await tk.open_thread()
    events = sample_events()
    assert await thread.append(events[:2]) == AppendResult(thread.id, 1, 2)
    assert await thread.append(events[2:]) == AppendResult(thread.id, 2, 5)
    assert thread.info.version == 2
    assert await thread.render_xml() == SAMPLE_XML
    assert await thread.render("xml") == {"format": "xml", "version": 2, "text": SAMPLE_XML}


async def test_response_prefix_setting_and_option(tk: AsyncThreadKeeper) -> None:
    thread = await tk.open_thread(settings={"responsePrefix": "Based on the above thread, I will now"})
    await thread.append(sample_events())
    assert await thread.render_xml() == SAMPLE_XML + "\nBased on the above thread, I will now"
    assert await thread.render_xml(response_prefix="Next:") == SAMPLE_XML + "\nNext:"
    assert await (await tk.open_thread()).render_xml() == "<thread>\n</thread>"


async def test_escape_minimal(tk: AsyncThreadKeeper) -> None:
    thread = await tk.open_thread()
    await thread.append([{"type": "tool_call", "toolName": 'say "hi"', "toolCallId": "q", "args": {"text": "it's <ok>"}, "iteration": 2}])
    minimal = (await thread.render_xml(escape="minimal")).split("\n")[1]
    assert minimal == '  <event type="tool_input" id="0" name="say &quot;hi&quot;" iteration="2">{"text":"it\'s &lt;ok&gt;"}</event>'
    full = (await thread.render_xml()).split("\n")[1]
    assert full == '  <event type="tool_input" id="0" name="say &quot;hi&quot;" iteration="2">{&quot;text&quot;:&quot;it&apos;s &lt;ok&gt;&quot;}</event>'


async def test_events_come_back_exactly(tk: AsyncThreadKeeper) -> None:
    thread = await tk.open_thread()
    events: list[dict[str, Any]] = [
        {"iteration": 3, "type": "message", "content": "keys out of order", "role": "user", "extra": {"nested": [1, 2.5, "x"]}},
        {"type": "approval", "iteration": 4, "decision": "granted", "by": {"name": "ann"}, "timestamp": 5},
        {"type": "tool_result", "toolCallId": "none", "result": {"ok": True, "list": [None, "é", "😀"]}, "iteration": 4, "durationMs": 12},
        # Looks like a JSON-RPC response inside the data: must come back as data.
        {"type": "rpc_log", "iteration": 5, "jsonrpc": "2.0", "id": 1, "result": {"error": {"code": -1}}},
    ]
    await thread.append(events)
    back = await thread.events()
    assert back == events
    assert [list(e) for e in back] == [list(e) for e in events], "same key order"
    assert await thread.events_page(offset=1, limit=1) == EventsPage(1, 4, [events[1]])
    assert await thread.events(offset=2) == events[2:]
    assert await thread.events(offset=10) == []


async def test_bad_event_rejects_the_whole_append(tk: AsyncThreadKeeper) -> None:
    thread = await tk.open_thread()
    await thread.append(sample_events()[:1])
    bad = [*sample_events()[1:3], {"type": "tool_call", "toolName": "x", "args": {}, "iteration": 1}]
    error = await raises_code(thread.append(bad), ErrorCode.INVALID_PARAMS)
    assert error.data["path"] == "events[2].toolCallId"
    assert "events[2].toolCallId" in error.message
    page = await thread.events_page()
    assert (page.version, page.event_count) == (1, 1)
    error = await raises_code(thread.append([{"type": "message", "role": "user", "content": "x"}]), ErrorCode.INVALID_PARAMS)
    assert error.data["path"] == "events[0].iteration"


async def test_expected_version_conflict(tk: AsyncThreadKeeper) -> None:
    thread = await tk.open_thread()
    await thread.append(sample_events()[:1], expected_version=0)
    await thread.append(sample_events()[1:2], expected_version=1)
    error = await raises_code(thread.append(sample_events()[2:], expected_version=1), ErrorCode.VERSION_CONFLICT)
    assert error.data == {"threadId": thread.id, "currentVersion": 2}
    assert (await thread.events_page()).event_count == 2


async def test_unknown_thread(tk: AsyncThreadKeeper) -> None:
    ghost = await tk.open_thread("ghost-1")
    await ghost.delete()
    for call in (ghost.render_xml(), ghost.append(sample_events()), ghost.events(), ghost.close()):
        error = await raises_code(call, ErrorCode.THREAD_NOT_FOUND)
        assert error.data == {"threadId": "ghost-1"}


async def test_list_close_delete() -> None:
    async with await spawn_memory() as tk:
        a = await tk.open_thread("a", metadata={"k": 1})
        b = await tk.open_thread("b")
        await a.append(sample_events())
        listed = {t.thread_id: t for t in await tk.list_threads()}
        assert sorted(listed) == ["a", "b"]
        assert (listed["a"].event_count, listed["a"].version, listed["a"].metadata) == (5, 1, {"k": 1})
        await b.close()
        assert [t.thread_id for t in await tk.list_threads()] == ["a"]
        await raises_code(b.render_xml(), ErrorCode.THREAD_NOT_FOUND)
        assert await a.delete() is True
        assert await a.delete() is False
        assert await tk.delete_thread("never-was") is False
        assert await tk.list_threads() == []
