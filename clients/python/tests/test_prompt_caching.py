"""Prompt caching from the client: Anthropic cache breakpoints (``render_anthropic(cache_control=...)``,
sent as ``options.cacheControl``) and a budget that keeps its cut (``budget["dropTo"]``).

A server without these options answers -32602 at the option's path; those tests are then skipped,
and only then (any other answer is checked).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any, TypeVar

import pytest
from conftest import BINARY, MEMORY_ARGS, loop_events
from provider_fixtures import load_fixtures, open_fixture
from provider_types import ANTHROPIC, ANTHROPIC_SYSTEM, OPENAI_CHAT_CREATE, OPENAI_RESPONSES_CREATE, validate_type

from threadkeeper import AsyncThreadKeeper, ErrorCode, Thread, ThreadKeeper, ThreadKeeperError

T = TypeVar("T")


def unless_option_refused(path: str, call: Callable[[], T]) -> T:
    """``call()``; skips the test when the server answers -32602 at ``path`` (it has no such option)."""
    try:
        return call()
    except ThreadKeeperError as error:
        if error.code == ErrorCode.INVALID_PARAMS and isinstance(error.data, dict) and error.data.get("path") == path:
            pytest.skip(f"the server under test has no {path}: {error.message}")
        raise


def breakpoints(value: Any) -> Iterator[dict[str, Any]]:
    """Every ``cache_control`` in a request, wherever it is."""
    if isinstance(value, dict):
        if "cache_control" in value:
            yield value["cache_control"]
        for item in value.values():
            yield from breakpoints(item)
    elif isinstance(value, list):
        for item in value:
            yield from breakpoints(item)


@pytest.fixture
def thread() -> Iterator[Thread]:
    with ThreadKeeper.spawn(binary=BINARY, args=MEMORY_ARGS) as tk:
        thread = tk.open_thread(settings={"instructions": "You are a careful coding agent."})
        thread.append(loop_events(400))
        yield thread


def test_without_the_option_no_cache_control_anywhere(thread: Thread) -> None:
    request = thread.render_anthropic()
    assert list(breakpoints(request)) == []
    assert isinstance(request["system"], str)


def test_cache_control_none_is_todays_request(thread: Thread) -> None:
    none = unless_option_refused("options.cacheControl", lambda: thread.render_anthropic(cache_control="none"))
    assert none == thread.render_anthropic()


def test_auto_breakpoints_mark_the_system_prompt_and_the_last_block(thread: Thread) -> None:
    request = unless_option_refused("options.cacheControl", lambda: thread.render_anthropic(cache_control="auto"))
    marks = list(breakpoints(request))
    assert 2 <= len(marks) <= 4
    assert all(mark == {"type": "ephemeral"} for mark in marks)
    system = request["system"]
    assert isinstance(system, list) and system[-1]["type"] == "text"
    assert system[-1].get("cache_control") == {"type": "ephemeral"}
    assert request["messages"][-1]["content"][-1].get("cache_control") == {"type": "ephemeral"}
    assert all(block.get("text", "x") != "" for block in _blocks(request) if "cache_control" in block), "no breakpoint on an empty block"
    validate_type(ANTHROPIC, request["messages"])
    validate_type(ANTHROPIC_SYSTEM, request["system"])


def _blocks(request: Any) -> Iterator[dict[str, Any]]:
    system = request.get("system")
    if isinstance(system, list):
        yield from system
    for message in request["messages"]:
        yield from message["content"]


def test_a_ttl_goes_on_every_breakpoint(thread: Thread) -> None:
    request = unless_option_refused("options.cacheControl", lambda: thread.render_anthropic(cache_control={"ttl": "1h"}))
    marks = list(breakpoints(request))
    assert marks and all(mark == {"type": "ephemeral", "ttl": "1h"} for mark in marks)
    # The same through render(), as the wire carries it.
    rendered = thread.render("anthropic", cache_control={"ttl": "5m"})
    assert {mark.get("ttl") for mark in breakpoints(rendered["messages"])} == {"5m"}


def test_cache_control_on_another_format_is_refused_at_the_option(thread: Thread) -> None:
    with pytest.raises(ThreadKeeperError) as info:
        thread.render("ai-sdk", cache_control="auto")
    assert info.value.code == ErrorCode.INVALID_PARAMS
    assert info.value.data["path"] == "options.cacheControl"


async def test_the_async_client_sends_it_too() -> None:
    async with AsyncThreadKeeper.spawn(binary=BINARY, args=MEMORY_ARGS) as tk:
        thread = await tk.open_thread()
        await thread.append(loop_events(8))
        try:
            request = await thread.render_anthropic(cache_control="auto")
        except ThreadKeeperError as error:
            if error.code == ErrorCode.INVALID_PARAMS and error.data.get("path") == "options.cacheControl":
                pytest.skip("the server under test has no options.cacheControl")
            raise
        assert request["messages"][-1]["content"][-1].get("cache_control") == {"type": "ephemeral"}


def test_a_budget_with_drop_to_keeps_its_cut_between_drops() -> None:
    with ThreadKeeper.spawn(binary=BINARY, args=MEMORY_ARGS) as tk:
        thread = tk.open_thread()
        events = loop_events(4 * 120)
        budget = {"maxTokens": 1500, "dropTo": 900}
        previous: dict[str, Any] | None = None
        cuts = 0
        for step in range(120):
            thread.append(events[step * 4 : step * 4 + 4])
            rendered = unless_option_refused(
                "options.budget.dropTo", lambda: thread.render("openai-chat", budget={"maxTokens": 1500, "dropTo": 900})
            )
            assert rendered["tokens"] <= budget["maxTokens"]
            if previous is not None:
                if rendered["dropped"]["iterations"] == previous["dropped"]["iterations"]:
                    # The cut stayed: this request extends the previous one.
                    assert rendered["messages"][: len(previous["messages"])] == previous["messages"]
                else:
                    cuts += 1
                    assert len(rendered["dropped"]["iterations"]) > len(previous["dropped"]["iterations"])
                    assert rendered["tokens"] <= budget["dropTo"]
            previous = rendered
        assert cuts >= 2, "the thread outgrew the budget more than once"
        assert cuts < 60, "a cut is kept for several steps, not moved at every step"


def test_drop_to_over_max_tokens_is_refused_at_drop_to() -> None:
    with ThreadKeeper.spawn(binary=BINARY, args=MEMORY_ARGS) as tk:
        thread = tk.open_thread()
        thread.append(loop_events(8))
        with pytest.raises(ThreadKeeperError) as info:
            thread.render("messages", budget={"maxTokens": 100, "dropTo": 101})
        assert info.value.code == ErrorCode.INVALID_PARAMS
        assert info.value.data["path"] == "options.budget.dropTo"


def test_the_wire_form_of_the_options() -> None:
    from threadkeeper.client import render_options

    assert render_options(cache_control="auto") == {"cacheControl": "auto"}
    assert render_options(cache_control={"ttl": "1h"}, budget={"maxTokens": 30000, "dropTo": 18000}) == {
        "cacheControl": {"ttl": "1h"},
        "budget": {"maxTokens": 30000, "dropTo": 18000},
    }
    assert render_options() == {}


# OpenAI prompt caching (``cache_control`` of ``render_openai_chat`` / ``render_openai_responses``)
# and XML context mode in cacheable blocks.

OPENAI_CACHE_OPTIONS: list[Any] = [
    "auto",
    {"breakpoints": "explicit", "ttl": "30m"},
    {"key": "tenant-7/run"},
    {"breakpoints": "implicit"},
    {"breakpoints": "none"},
]


def openai_breakpoints(value: Any) -> Iterator[dict[str, Any]]:
    """Every part that carries ``prompt_cache_breakpoint``, wherever it is."""
    if isinstance(value, dict):
        if "prompt_cache_breakpoint" in value:
            yield value
        for item in value.values():
            yield from openai_breakpoints(item)
    elif isinstance(value, list):
        for item in value:
            yield from openai_breakpoints(item)


def check_openai_requests(thread: Thread, context_mode: Any) -> int:
    """Renders ``thread`` under every cache option in both OpenAI formats, checks each request
    against the SDK's request types and the breakpoint rules; answers how many were checked."""
    checked = 0
    for cache_control in OPENAI_CACHE_OPTIONS:
        chat = thread.render_openai_chat(context_mode=context_mode, cache_control=cache_control)
        validate_type(OPENAI_CHAT_CREATE, [{"model": "gpt-5.6", **chat}])
        responses = thread.render_openai_responses(context_mode=context_mode, cache_control=cache_control)
        validate_type(OPENAI_RESPONSES_CREATE, [{"model": "gpt-5.6", **responses}])
        for request in (chat, responses):
            marks = list(openai_breakpoints(request))
            assert len(marks) <= 3
            assert all(part["text"] != "" for part in marks)
            assert request["prompt_cache_key"] == (cache_control["key"] if isinstance(cache_control, dict) and "key" in cache_control else request["prompt_cache_key"])
        assert not any(message["role"] == "assistant" and list(openai_breakpoints(message)) for message in chat["messages"])
        checked += 2
    return checked


def test_openai_cached_requests_pass_the_openai_sdk_request_types(thread: Thread) -> None:
    unless_option_refused("options.cacheControl", lambda: thread.render_openai_chat(cache_control="auto"))
    assert check_openai_requests(thread, None) == 10
    assert check_openai_requests(thread, "xml") == 10
    chat = thread.render_openai_chat(cache_control="auto")
    assert chat["prompt_cache_key"].startswith("tk-") and chat["prompt_cache_options"] == {"mode": "implicit"}
    assert thread.render_openai_chat(cache_control="none") == thread.render_openai_chat()


def test_every_fixture_thread_cached_passes_both_sdks_request_types() -> None:
    with ThreadKeeper.spawn(binary=BINARY, args=MEMORY_ARGS) as tk:
        probe = tk.open_thread()
        unless_option_refused("options.cacheControl", lambda: probe.render_openai_chat(cache_control="auto"))
        for fixture in load_fixtures():
            thread = open_fixture(tk, fixture)
            for context_mode in (None, "xml"):
                check_openai_requests(thread, context_mode)
                request = thread.render_anthropic(context_mode=context_mode, cache_control="auto")
                validate_type(ANTHROPIC, request["messages"])
                if "system" in request:
                    validate_type(ANTHROPIC_SYSTEM, request["system"])


def test_xml_mode_blocks_join_to_the_document_and_pass_anthropic_types(thread: Thread) -> None:
    request = thread.render_anthropic(context_mode="xml", cache_control="auto")
    blocks = request["messages"][0]["content"]
    assert len(blocks) > 2
    assert "".join(block["text"] for block in blocks if block["type"] == "text") == thread.render_xml()
    assert blocks[-1] == {"type": "text", "text": "</thread>"}
    assert 2 <= len(list(breakpoints(request))) <= 4
    validate_type(ANTHROPIC, request["messages"])
    validate_type(ANTHROPIC_SYSTEM, request["system"])


def test_bad_openai_cache_options_are_refused_where_they_are(thread: Thread) -> None:
    for cache_control, path in [
        ({"ttl": "5m"}, "options.cacheControl.ttl"),
        ({"breakpoints": "all"}, "options.cacheControl.breakpoints"),
        ({"key": ""}, "options.cacheControl.key"),
        ({"prompt_cache_key": "k"}, "options.cacheControl.prompt_cache_key"),
    ]:
        with pytest.raises(ThreadKeeperError) as refused:
            thread.render_openai_chat(cache_control=cache_control)  # type: ignore[call-overload]
        assert refused.value.code == ErrorCode.INVALID_PARAMS
        assert isinstance(refused.value.data, dict) and refused.value.data["path"] == path

