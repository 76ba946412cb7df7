"""Every fixture thread, rendered for each provider, is a request the provider accepts.

Three checks per rendering: the provider SDK's own request type (pydantic-validated, strict, no
extra keys, every required key), the provider's sequencing rules (provider_rules.py), and
nothing lost (provider_fixtures.lost_texts). The ``messages`` format is checked after
LangChain's own converters turn it into each provider's request.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from conftest import BINARY, MEMORY_ARGS, spawn_memory
from langchain_conversion import langchain_problems
from provider_fixtures import Fixture, event_texts, load_fixtures, lost_texts, open_fixture
from provider_rules import anthropic_problems, openai_chat_problems, openai_responses_problems
from provider_types import ANTHROPIC, OPENAI_CHAT, OPENAI_RESPONSES, validate_type

from threadkeeper import Thread, ThreadKeeper
from threadkeeper.client import render_options

FIXTURES = load_fixtures()
#: Render options each fixture is checked with (keyword arguments of the render helpers).
OPTION_SETS: dict[str, dict[str, Any]] = {
    "default": {},
    "grouped-drop": {"group_tool_calls": True, "dangling_tool_calls": "drop"},
    "xml-mode": {"context_mode": "xml"},
}
RENDER_KEYS = {"format", "version", "contextMode"}

#: Server behaviour these checks find wrong, as (check, fixture, option set or None for all) →
#: why, run as strict expected failures so a fix on the server turns them into failures to
#: remove from here. Empty: the gaps found so far (blank text for Anthropic, reasoning ids and
#: summaries, the messages format opening with the assistant, long or empty ids) are fixed.
KNOWN_SERVER_GAPS: dict[tuple[str, str, str | None], str] = {}


def by_fixture_and_options(check: str) -> Any:
    params = []
    for f in FIXTURES:
        for name in OPTION_SETS:
            gap = KNOWN_SERVER_GAPS.get((check, f.name, name))
            marks = [pytest.mark.xfail(strict=True, reason=gap)] if gap else []
            params.append(pytest.param(f, name, id=f"{f.name}-{name}", marks=marks))
    return pytest.mark.parametrize(("fixture", "option_set"), params)


class FixtureThreads:
    """One server for the module; each fixture's thread made on first use."""

    def __init__(self, tk: ThreadKeeper) -> None:
        self.tk = tk
        self._threads: dict[str, Thread] = {}

    def get(self, fixture: Fixture) -> Thread:
        if fixture.name not in self._threads:
            self._threads[fixture.name] = open_fixture(self.tk, fixture)
        return self._threads[fixture.name]


@pytest.fixture(scope="module")
def threads() -> Iterator[FixtureThreads]:
    with ThreadKeeper.spawn(binary=BINARY, args=MEMORY_ARGS, client_info={"name": "threadkeeper-py-tests"}) as tk:
        yield FixtureThreads(tk)


def check_nothing_lost(thread: Thread, rendering: Any, system_part: Any, *, responses: bool = False) -> None:
    instructions = thread.info.settings.get("instructions")
    lost = lost_texts(event_texts(thread.events(), instructions), rendering, system_part, responses=responses)
    assert lost == [], "texts of the thread missing from the rendering:\n" + "\n".join(lost)


def expected_context_mode(options: dict[str, Any]) -> str:
    return str(options.get("context_mode", "standard"))


def assert_no_problems(problems: list[str], rendering: Any) -> None:
    assert problems == [], "\n".join(problems) + f"\nrendering: {rendering!r}"


@by_fixture_and_options("openai-chat")
def test_openai_chat(threads: FixtureThreads, fixture: Fixture, option_set: str) -> None:
    options = OPTION_SETS[option_set]
    thread = threads.get(fixture)
    result = thread.render("openai-chat", **options)
    assert set(result) == RENDER_KEYS | {"messages"}
    assert (result["format"], result["contextMode"]) == ("openai-chat", expected_context_mode(options))
    messages = result["messages"]
    validate_type(OPENAI_CHAT, messages)
    assert_no_problems(openai_chat_problems(messages), messages)
    assert thread.render_openai_chat(**options) == {"messages": messages}
    if option_set == "default":
        check_nothing_lost(thread, messages, [m for m in messages if m["role"] == "system"])


@by_fixture_and_options("openai-responses")
def test_openai_responses(threads: FixtureThreads, fixture: Fixture, option_set: str) -> None:
    options = OPTION_SETS[option_set]
    thread = threads.get(fixture)
    result = thread.render("openai-responses", **options)
    assert RENDER_KEYS | {"input"} <= set(result) <= RENDER_KEYS | {"input", "instructions"}
    assert (result["format"], result["contextMode"]) == ("openai-responses", expected_context_mode(options))
    items = result["input"]
    validate_type(OPENAI_RESPONSES, items)
    assert_no_problems(openai_responses_problems(items), items)
    if "instructions" in result:
        assert isinstance(result["instructions"], str) and result["instructions"].strip()
    request = {key: value for key, value in result.items() if key not in RENDER_KEYS}
    assert thread.render_openai_responses(**options) == request
    if option_set == "default":
        check_nothing_lost(thread, request, result.get("instructions"), responses=True)


@by_fixture_and_options("anthropic")
def test_anthropic(threads: FixtureThreads, fixture: Fixture, option_set: str) -> None:
    options = OPTION_SETS[option_set]
    thread = threads.get(fixture)
    result = thread.render("anthropic", **options)
    assert RENDER_KEYS | {"messages"} <= set(result) <= RENDER_KEYS | {"messages", "system"}
    assert (result["format"], result["contextMode"]) == ("anthropic", expected_context_mode(options))
    messages = result["messages"]
    validate_type(ANTHROPIC, messages)
    assert_no_problems(anthropic_problems(result.get("system"), messages), result)
    request = {key: value for key, value in result.items() if key not in RENDER_KEYS}
    assert thread.render_anthropic(**options) == request
    if option_set == "default":
        check_nothing_lost(thread, request, result.get("system"))


@by_fixture_and_options("langchain")
def test_messages_through_langchain_converters(threads: FixtureThreads, fixture: Fixture, option_set: str) -> None:
    """The ``messages`` format, loaded by LangChain and converted by its provider packages."""
    options = OPTION_SETS[option_set]
    thread = threads.get(fixture)
    stored = thread.render_messages(**options)
    if option_set == "default":
        check_nothing_lost(thread, stored, [m for m in stored if m["type"] == "system"])
    assert_no_problems(langchain_problems(stored), stored)


# What the repairs produce, on the fixtures made for them.


def fixture_named(name: str) -> Fixture:
    return next(f for f in FIXTURES if f.name == name)


def test_unanswered_call_gets_an_error_result_or_is_dropped(threads: FixtureThreads) -> None:
    thread = threads.get(fixture_named("unanswered-call-at-end"))
    stored = thread.render_messages()
    answers = [m for m in stored if m["type"] == "tool" and m["data"]["tool_call_id"] == "rt_1"]
    assert len(answers) == 1 and answers[0]["data"].get("status") == "error", stored
    anthropic = thread.render_anthropic()["messages"]
    results = [b for m in anthropic for b in m["content"] if b["type"] == "tool_result"]
    assert [r["is_error"] for r in results] == [True], anthropic

    dropped = thread.render_openai_chat(dangling_tool_calls="drop")["messages"]
    assert not any(m["role"] in ("tool",) or m.get("tool_calls") for m in dropped), dropped
    assert [m["content"] for m in dropped if m["role"] != "system"] == ["Run the tests.", "Running them now."]


def test_tool_error_is_the_calls_result(threads: FixtureThreads) -> None:
    thread = threads.get(fixture_named("tool-error-with-call-id"))
    chat = thread.render_openai_chat()["messages"]
    tool = [m for m in chat if m["role"] == "tool"]
    assert len(tool) == 1 and "ENOENT: no such file config.yaml" in str(tool[0]["content"]), chat
    outputs = [i for i in thread.render_openai_responses()["input"] if i["type"] == "function_call_output"]
    assert len(outputs) == 1 and "ENOENT" in outputs[0]["output"]
    results = [b for m in thread.render_anthropic()["messages"] for b in m["content"] if b["type"] == "tool_result"]
    assert len(results) == 1 and results[0]["is_error"] is True
    stored = thread.render_messages()
    assert [m["data"].get("status") for m in stored if m["type"] == "tool"] == ["error"]


def test_parallel_calls_share_one_assistant_turn(threads: FixtureThreads) -> None:
    thread = threads.get(fixture_named("three-parallel-calls"))
    chat = thread.render_openai_chat()["messages"]
    calls = [m for m in chat if m["role"] == "assistant" and m.get("tool_calls")]
    assert len(calls) == 1 and [c["id"] for c in calls[0]["tool_calls"]] == ["w_paris", "w_oslo", "w_lima"]
    anthropic = thread.render_anthropic()["messages"]
    assert [m["role"] for m in anthropic] == ["user", "assistant", "user", "assistant"]
    assert [b["type"] for b in anthropic[2]["content"]] == ["tool_result"] * 3


@pytest.mark.parametrize("name", ["reasoning", "reasoning-with-item-id"])
def test_reasoning_block_becomes_a_responses_reasoning_item(threads: FixtureThreads, name: str) -> None:
    """Replayed as the Responses API gave it: id, summary parts, encrypted content, then its call."""
    fixture = fixture_named(name)
    assert fixture.turn is not None
    block = fixture.turn["blocks"][2]
    thread = threads.get(fixture)
    items = thread.render_openai_responses()["input"]
    reasoning = [i for i in items if i["type"] == "reasoning"]
    expected = {"type": "reasoning", "id": block["id"], "summary": block["payload"]["summary"], "encrypted_content": block["payload"]["encrypted_content"]}
    assert reasoning == [expected], items
    following = items[items.index(reasoning[0]) + 1]
    assert following["type"] == "function_call" and following["call_id"] == fixture.turn["blocks"][3]["payload"]["id"]


def test_anthropic_ids_are_mapped_one_to_one(threads: FixtureThreads) -> None:
    thread = threads.get(fixture_named("forbidden-ids"))
    messages = thread.render_anthropic()["messages"]
    uses = {b["input"]["n"]: b["id"] for m in messages for b in m["content"] if b["type"] == "tool_use"}
    assert sorted(uses) == [1, 2, 3, 4, 5, 6, 7]
    assert len(set(uses.values())) == 7, uses
    results = {b["tool_use_id"]: b.get("content") for m in messages for b in m["content"] if b["type"] == "tool_result"}
    words = {1: "one", 2: "two", 3: "three", 4: "four", 5: "five", 6: "six", 7: "seven"}
    assert {n: results[tool_id] for n, tool_id in uses.items()} == words


def test_summaries_and_instructions_are_the_system_prompt(threads: FixtureThreads) -> None:
    thread = threads.get(fixture_named("summaries"))
    for system in (thread.render_anthropic()["system"], thread.render_openai_responses()["instructions"]):
        assert system.startswith("## Previous Iteration Summaries\n\n"), system
        assert system.endswith("You are a careful research assistant.")
    chat = thread.render_openai_chat()["messages"]
    assert chat[0]["role"] == "system" and [m["role"] for m in chat[1:]].count("system") == 0


def test_dangling_tool_calls_option_on_the_wire() -> None:
    assert render_options(dangling_tool_calls="drop") == {"danglingToolCalls": "drop"}
    assert render_options() == {}


async def test_async_helpers_answer_the_render_request_fields() -> None:
    async with await spawn_memory() as tk:
        thread = await tk.open_thread(settings={"instructions": "Be brief."})
        await thread.append(load_fixture_events("one-call"))
        chat = await thread.render("openai-chat")
        assert await thread.render_openai_chat() == {"messages": chat["messages"]}
        assert chat["messages"][0] == {"role": "system", "content": "Be brief."}
        responses = await thread.render("openai-responses")
        assert await thread.render_openai_responses() == {"instructions": "Be brief.", "input": responses["input"]}
        anthropic = await thread.render("anthropic", dangling_tool_calls="repair")
        assert await thread.render_anthropic(dangling_tool_calls="repair") == {"system": "Be brief.", "messages": anthropic["messages"]}
        assert anthropic["messages"][0] == {"role": "user", "content": [{"type": "text", "text": "What is 2+2?"}]}
        bare = await tk.open_thread()
        await bare.append(load_fixture_events("one-call"))
        assert "instructions" not in await bare.render_openai_responses()
        assert "system" not in await bare.render_anthropic()


def load_fixture_events(name: str) -> list[dict[str, Any]]:
    events = fixture_named(name).events
    assert events is not None
    return events
