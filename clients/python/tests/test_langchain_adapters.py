"""LangChain messages to events (``messages/toEvents``) and the thread-backed chat history."""

from __future__ import annotations

from typing import Any

import pytest
from conftest import BINARY, MEMORY_ARGS, skip_unless_blocking_server_has, skip_unless_server_has
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage

from threadkeeper import AsyncThreadKeeper, ThreadKeeper, langchain_to_stored_messages
from threadkeeper.chat_history import ThreadChatMessageHistory

NEW_METHODS = ("messages/toEvents", "thread/events")

CONVERSATION: list[BaseMessage] = [
    SystemMessage("Be brief.", id="m0"),
    HumanMessage("What is 2+2? And 3+3?", id="m1"),
    AIMessage("Let me add.", id="m2", tool_calls=[{"id": "c1", "name": "add", "args": {"a": 2, "b": 2}}, {"id": "c2", "name": "add", "args": {"a": 3, "b": 3}}]),
    ToolMessage("4", tool_call_id="c1", id="m3"),
    ToolMessage("adder crashed", tool_call_id="c2", status="error", id="m4"),
    AIMessage("2+2 is 4; 3+3 failed.", id="m5"),
]

#: What ``CONVERSATION`` is as events, written out by hand.
CONVERSATION_EVENTS: list[dict[str, Any]] = [
    {"type": "message", "role": "system", "content": "Be brief.", "iteration": 4, "messageId": "m0"},
    {"type": "message", "role": "user", "content": "What is 2+2? And 3+3?", "iteration": 4, "messageId": "m1"},
    {"type": "message", "role": "assistant", "content": "Let me add.", "iteration": 4, "messageId": "m2"},
    {"type": "tool_call", "toolName": "add", "toolCallId": "c1", "args": {"a": 2, "b": 2}, "iteration": 4, "messageId": "m2"},
    {"type": "tool_call", "toolName": "add", "toolCallId": "c2", "args": {"a": 3, "b": 3}, "iteration": 4, "messageId": "m2"},
    {"type": "tool_result", "toolCallId": "c1", "result": "4", "iteration": 4, "messageId": "m3"},
    {"type": "error", "error": "adder crashed", "recoverable": True, "toolCallId": "c2", "iteration": 4, "messageId": "m4"},
    {"type": "message", "role": "assistant", "content": "2+2 is 4; 3+3 failed.", "iteration": 4, "messageId": "m5"},
]

#: The events that survive events → messages → events unchanged (but for iteration and timestamp).
FAITHFUL_EVENTS: list[dict[str, Any]] = [
    {"type": "message", "role": "user", "content": "Go", "iteration": 0, "timestamp": 1},
    {"type": "message", "role": "system", "content": "Be careful.", "iteration": 0},
    {"type": "tool_call", "toolName": "f", "toolCallId": "c1", "args": {"a": 1}, "iteration": 1, "timestamp": 2},
    {"type": "tool_call", "toolName": "g", "toolCallId": "c2", "args": {}, "iteration": 1},
    {"type": "tool_result", "toolCallId": "c1", "result": "2", "iteration": 1},
    {"type": "error", "error": "bad", "recoverable": False, "toolCallId": "c2", "iteration": 1},
    {"type": "error", "error": "oops", "recoverable": True, "iteration": 1},
    {"type": "human_input_received", "response": "yes", "iteration": 2},
    {"type": "message", "role": "assistant", "content": "done", "iteration": 2},
]


def restamped(events: list[dict[str, Any]], iteration: int) -> list[dict[str, Any]]:
    return [{**{k: v for k, v in e.items() if k != "timestamp"}, "iteration": iteration} for e in events]


def seen(messages: list[BaseMessage]) -> list[tuple[str, Any, Any, Any]]:
    """Type, content, tool calls and status: what a message says, without its id."""
    calls = [[(c["id"], c["name"], c["args"]) for c in m.tool_calls] if isinstance(m, AIMessage) else None for m in messages]
    return [(m.type, m.content, call, getattr(m, "status", None)) for m, call in zip(messages, calls)]


def test_stored_form_keeps_every_field() -> None:
    stored = langchain_to_stored_messages(CONVERSATION)
    assert [m["type"] for m in stored] == ["system", "human", "ai", "tool", "tool", "ai"]
    assert stored[4]["data"]["status"] == "error" and stored[4]["data"]["id"] == "m4"


async def test_messages_to_events_is_faithful(tk: AsyncThreadKeeper) -> None:
    await skip_unless_server_has(tk, *NEW_METHODS)
    assert await tk.messages_to_events(CONVERSATION, iteration=4) == CONVERSATION_EVENTS


async def test_events_messages_events_round_trip(tk: AsyncThreadKeeper) -> None:
    await skip_unless_server_has(tk, *NEW_METHODS)
    thread = await tk.open_thread()
    await thread.append(FAITHFUL_EVENTS)
    messages = await thread.to_langchain_messages()
    assert await tk.messages_to_events(messages, iteration=7) == restamped(FAITHFUL_EVENTS, 7)


async def test_messages_events_messages_round_trip(tk: AsyncThreadKeeper) -> None:
    await skip_unless_server_has(tk, *NEW_METHODS)
    thread = await tk.open_thread()
    await thread.append_langchain_messages(CONVERSATION[1:])
    expected = seen(CONVERSATION[1:])
    # Every message comes back with its id, the AI message's text beside its calls; the tool error
    # keeps its status and gains the label the renderer writes for errors.
    expected[3] = ("tool", "[Error (recoverable)]: adder crashed", None, "error")
    rendered = await thread.to_langchain_messages()
    assert seen(rendered) == expected
    assert [m.id for m in rendered] == [m.id for m in CONVERSATION[1:]]


async def test_async_chat_history(tk: AsyncThreadKeeper) -> None:
    await skip_unless_server_has(tk, *NEW_METHODS)
    thread = await tk.open_thread("history-1", settings={"instructions": "Be brief."})
    history = ThreadChatMessageHistory(thread)
    assert await history.aget_messages() == [SystemMessage("Be brief.")]
    await history.aadd_messages([HumanMessage("Hi"), AIMessage("Hello!")])
    await history.aadd_messages([HumanMessage("Again")])
    await history.aadd_messages([AIMessage("Hello again!")])
    assert [(m.type, m.content) for m in await history.aget_messages()] == [
        ("system", "Be brief."),
        ("human", "Hi"),
        ("ai", "Hello!"),
        ("human", "Again"),
        ("ai", "Hello again!"),
    ]
    # A call that starts with a human message opens the next iteration; other calls continue it.
    assert [e["iteration"] for e in await thread.events()] == [0, 0, 1, 1]
    with pytest.raises(TypeError, match="use its async methods"):
        history.messages
    await history.aclear()
    assert await history.aget_messages() == [SystemMessage("Be brief.")]
    assert (await tk.open_thread("history-1")).info.settings == {"instructions": "Be brief."}


def test_blocking_chat_history_and_its_async_variants() -> None:
    import asyncio

    with ThreadKeeper.spawn(binary=BINARY, args=MEMORY_ARGS) as tk:
        skip_unless_blocking_server_has(tk, *NEW_METHODS)
        history = ThreadChatMessageHistory(tk.open_thread("history-2"))
        history.add_user_message("What is 2+2?")
        history.add_ai_message("4")
        assert [(m.type, m.content) for m in history.messages] == [("human", "What is 2+2?"), ("ai", "4")]
        # The async variants run on the client's own loop, from the caller's loop.
        assert asyncio.run(history.aget_messages()) == history.messages
        history.clear()
        assert history.messages == []
        assert tk.messages_to_events([HumanMessage("x")]) == [{"type": "message", "role": "user", "content": "x", "iteration": 0}]


def test_history_refuses_what_is_not_a_thread() -> None:
    with pytest.raises(TypeError, match="needs a threadkeeper Thread or AsyncThread, got str"):
        ThreadChatMessageHistory("history-3")  # type: ignore[arg-type]
