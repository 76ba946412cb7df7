from __future__ import annotations

import sys
from typing import Any

import pytest
from conftest import sample_events, spawn_memory
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

from threadkeeper import stored_to_langchain_messages

STORED: list[Any] = [
    {"type": "system", "data": {"content": "Be brief."}},
    {"type": "human", "data": {"content": "What is 2+2?"}},
    {"type": "ai", "data": {"content": "", "tool_calls": [{"id": "c1", "name": "calculator", "args": {"expression": "2+2"}, "type": "tool_call"}]}},
    {"type": "tool", "data": {"content": "4", "tool_call_id": "c1"}},
    {"type": "ai", "data": {"content": "The answer is 4."}},
]


def test_stored_messages_become_langchain_classes() -> None:
    messages = stored_to_langchain_messages(STORED)
    assert [type(m) for m in messages] == [SystemMessage, HumanMessage, AIMessage, ToolMessage, AIMessage]
    assert messages[0].content == "Be brief."
    assert messages[1].content == "What is 2+2?"
    call = messages[2]
    assert isinstance(call, AIMessage)
    assert call.content == ""
    assert call.tool_calls == [{"id": "c1", "name": "calculator", "args": {"expression": "2+2"}, "type": "tool_call"}]
    result = messages[3]
    assert isinstance(result, ToolMessage)
    assert (result.tool_call_id, result.content) == ("c1", "4")
    assert messages[4].content == "The answer is 4."


def test_missing_langchain_core_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "langchain_core.messages", None)  # makes the import fail
    with pytest.raises(ImportError, match=r"pip install 'threadkeeper-sidecar\[langchain\]'"):
        stored_to_langchain_messages(STORED)


async def test_thread_to_langchain_messages() -> None:
    async with await spawn_memory() as tk:
        thread = await tk.open_thread(settings={"instructions": "Be brief."})
        await thread.append(sample_events())
        messages = await thread.to_langchain_messages()
        assert [type(m) for m in messages] == [SystemMessage, HumanMessage, AIMessage, ToolMessage, AIMessage]
        call = messages[2]
        assert isinstance(call, AIMessage)
        assert [(c["id"], c["name"], c["args"]) for c in call.tool_calls] == [("c1", "calculator", {"expression": "2+2"})]
        assert isinstance(messages[3], ToolMessage) and messages[3].tool_call_id == "c1"
        xml = await thread.to_langchain_messages(context_mode="xml")
        assert [type(m) for m in xml] == [SystemMessage, HumanMessage]
        assert str(xml[1].content).startswith("<thread>\n")
