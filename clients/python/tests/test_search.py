"""``search`` (``thread/search``) on both clients against the real server: typed hits and
cursor, paging, filters, and malformed queries as -32602 naming the field."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from conftest import BINARY, MEMORY_ARGS, spawn_memory

from threadkeeper import AsyncThreadKeeper, ErrorCode, SearchHit, SearchResult, ThreadKeeper, ThreadKeeperError


def deploy_events() -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = [
        {"type": "message", "role": "user" if i % 2 == 0 else "assistant", "content": f"step {i}: deploy the main branch", "iteration": i, "timestamp": 1_000 + i}
        for i in range(30)
    ]
    events.append({"type": "tool_call", "toolName": "run_shell", "toolCallId": "c1", "args": {"command": "git push origin main"}, "iteration": 30, "timestamp": 2_000})
    events.append({"type": "tool_result", "toolCallId": "c1", "result": "error: failed to push some refs", "iteration": 30, "timestamp": 2_001})
    return events


OTHER = [{"type": "message", "role": "user", "content": "Deploy to staging, not main", "iteration": 0, "timestamp": 5_000}]


@pytest.fixture
async def searchable() -> AsyncIterator[AsyncThreadKeeper]:
    tk = await spawn_memory()
    try:
        await (await tk.open_thread("deploy")).append(deploy_events())
        await (await tk.open_thread("other")).append(OTHER)
        yield tk
    finally:
        await tk.close()


def place(hit: SearchHit) -> str:
    return f"{hit.thread_id}:{hit.event_index}"


async def test_hits_are_typed_with_marked_snippets(searchable: AsyncThreadKeeper) -> None:
    result = await searchable.search("push")
    assert isinstance(result, SearchResult)
    assert sorted(place(h) for h in result.hits) == ["deploy:30", "deploy:31"]
    call = next(h for h in result.hits if h.event_index == 30)
    assert (call.type, call.iteration, call.role) == ("tool_call", 30, None)
    assert "«push»" in call.snippet
    assert all(isinstance(h.score, float) for h in result.hits)
    assert result.next_cursor is None
    [message] = (await searchable.search("staging")).hits
    assert (message.role, message.snippet) == ("user", "Deploy to «staging», not main")


async def test_paging_by_cursor_covers_every_hit_once_best_first(searchable: AsyncThreadKeeper) -> None:
    seen: list[str] = []
    cursor: str | None = None
    pages = 0
    while True:
        page = await searchable.search("deploy main", limit=7, cursor=cursor)
        assert len(page.hits) <= 7
        scores = [h.score for h in page.hits]
        assert scores == sorted(scores, reverse=True)
        seen += [place(h) for h in page.hits]
        pages += 1
        if page.next_cursor is None:
            break
        cursor = page.next_cursor
    assert pages == 5
    assert len(seen) == len(set(seen)) == 31


async def test_filters_threads_types_and_time(searchable: AsyncThreadKeeper) -> None:
    assert [place(h) for h in (await searchable.search("deploy", thread_ids=["other"])).hits] == ["other:0"]
    assert [place(h) for h in (await searchable.search("push", types=["tool_result"])).hits] == ["deploy:31"]
    window = await searchable.search("deploy", since=1_010, until=1_013, limit=100)
    assert sorted(place(h) for h in window.hits) == ["deploy:10", "deploy:11", "deploy:12"]
    excluded = await searchable.search("deploy -staging", limit=100)
    assert all(h.thread_id != "other" for h in excluded.hits)


@pytest.mark.parametrize(
    ("query", "options", "path"),
    [
        ('"deploy main', {}, "query"),
        ("-deploy", {}, "query"),
        ("x" * 100_000, {}, "query"),
        ("deploy", {"limit": 0}, "limit"),
        ("deploy", {"cursor": "nope"}, "cursor"),
        ("deploy", {"thread_ids": []}, "threadIds"),
    ],
)
async def test_malformed_queries_are_invalid_params_naming_the_field(searchable: AsyncThreadKeeper, query: str, options: dict[str, Any], path: str) -> None:
    with pytest.raises(ThreadKeeperError) as info:
        await searchable.search(query, **options)
    assert info.value.code == ErrorCode.INVALID_PARAMS
    assert isinstance(info.value.data, dict) and info.value.data["path"] == path


async def test_fts_syntax_has_no_meaning_and_never_fails(searchable: AsyncThreadKeeper) -> None:
    for query in ["NEAR(deploy main)", "^push:* OR", "deploy\0main", "'); DROP TABLE events; --"]:
        assert isinstance((await searchable.search(query)).hits, list)


def test_the_blocking_client_searches() -> None:
    with ThreadKeeper.spawn(binary=BINARY, args=MEMORY_ARGS) as tk:
        tk.open_thread("deploy").append(deploy_events())
        page = tk.search("deploy main", limit=10)
        assert len(page.hits) == 10 and page.next_cursor is not None
        rest = tk.search("deploy main", limit=100, cursor=page.next_cursor)
        assert len(rest.hits) == 20 and rest.next_cursor is None
        with pytest.raises(ThreadKeeperError) as info:
            tk.search('"unclosed')
        assert info.value.code == ErrorCode.INVALID_PARAMS
