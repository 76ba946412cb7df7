"""ThreadSession under the Agents SDK's own Runner, with a scripted model (offline, no API key)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import pytest
from agents import Agent, Model, ModelResponse, Runner, Usage, function_tool, set_tracing_disabled
from agents.items import TResponseInputItem, TResponseStreamEvent
from conftest import BINARY, MEMORY_ARGS, skip_unless_blocking_server_has, skip_unless_server_has
from openai.types.responses import ResponseFunctionToolCall, ResponseOutputMessage, ResponseOutputText

from threadkeeper import AsyncThreadKeeper, ThreadKeeper
from threadkeeper.openai_agents import ThreadSession

set_tracing_disabled(True)  # nothing leaves the machine


def say(text: str, n: int) -> ResponseOutputMessage:
    return ResponseOutputMessage(
        id=f"msg_{n}", type="message", role="assistant", status="completed", content=[ResponseOutputText(type="output_text", text=text, annotations=[])]
    )


def call(name: str, args: dict[str, Any], call_id: str) -> ResponseFunctionToolCall:
    return ResponseFunctionToolCall(type="function_call", name=name, arguments=json.dumps(args), call_id=call_id, id=f"fc_{call_id}", status="completed")


class ScriptedModel(Model):
    """Answers each model call with the next scripted output and records the input it was given."""

    def __init__(self, outputs: list[list[Any]]) -> None:
        self.outputs = outputs
        self.inputs: list[list[TResponseInputItem]] = []

    async def get_response(self, system_instructions: Any, input: Any, *args: Any, **kwargs: Any) -> ModelResponse:
        self.inputs.append([input] if isinstance(input, str) else list(input))
        return ModelResponse(output=self.outputs.pop(0), usage=Usage(), response_id=None)

    def stream_response(self, *args: Any, **kwargs: Any) -> AsyncIterator[TResponseStreamEvent]:
        raise NotImplementedError


@function_tool
def add(a: int, b: int) -> str:
    """Adds two numbers."""
    return str(a + b)


def plain(items: list[Any]) -> list[dict[str, Any]]:
    """Items as plain JSON (the SDK passes pydantic objects or dicts)."""
    return [item if isinstance(item, dict) else item.model_dump(exclude_none=True) for item in items]


def texts(items: list[Any]) -> list[str]:
    """What a person would read in the items: message texts, tool calls and their outputs."""
    seen: list[str] = []
    for item in plain(items):
        kind = item.get("type", "message")
        if kind == "message":
            content = item["content"]
            seen.append(f"{item['role']}: " + (content if isinstance(content, str) else "".join(p.get("text", "") for p in content)))
        elif kind == "function_call":
            seen.append(f"call {item['name']} {json.loads(item['arguments'])} {item['call_id']}")
        elif kind == "function_call_output":
            seen.append(f"output {item['call_id']} {item['output']}")
    return seen


async def two_turns(session: ThreadSession) -> ScriptedModel:
    model = ScriptedModel([[call("add", {"a": 1, "b": 2}, "c1")], [say("It is 3.", 1)], [say("You asked about 1 + 2.", 2)]])
    agent = Agent(name="calc", instructions="Use the tools.", model=model, tools=[add])
    first = await Runner.run(agent, "What is 1 + 2?", session=session)
    assert first.final_output == "It is 3."
    second = await Runner.run(agent, "What did I ask?", session=session)
    assert second.final_output == "You asked about 1 + 2."
    return model


FIRST_TURN = ["user: What is 1 + 2?", "call add {'a': 1, 'b': 2} c1", "output c1 3", "assistant: It is 3."]


async def test_runner_sees_the_first_turn_in_the_second(tk: AsyncThreadKeeper) -> None:
    await skip_unless_server_has(tk, "responses/toEvents", "thread/pop")
    session = await ThreadSession.open(tk, "agents-1")
    model = await two_turns(session)
    assert texts(model.inputs[0]) == FIRST_TURN[:1]
    assert texts(model.inputs[1]) == FIRST_TURN[:3]
    assert texts(model.inputs[2]) == [*FIRST_TURN, "user: What did I ask?"]
    assert texts(await session.get_items()) == [*FIRST_TURN, "user: What did I ask?", "assistant: You asked about 1 + 2."]
    events = await (await tk.open_thread("agents-1")).events()
    assert [e["type"] for e in events] == ["message", "tool_call", "tool_result", "message", "message", "message"]
    assert [e["iteration"] for e in events][:1] == [0] and events[4]["iteration"] > events[0]["iteration"]


async def test_get_items_limit_pop_and_clear(tk: AsyncThreadKeeper) -> None:
    await skip_unless_server_has(tk, "responses/toEvents", "thread/pop")
    session = await ThreadSession.open(tk)
    await two_turns(session)
    assert texts(await session.get_items(limit=2)) == ["user: What did I ask?", "assistant: You asked about 1 + 2."]
    assert await session.get_items(limit=0) == []
    popped = await session.pop_item()
    assert popped is not None and texts([popped]) == ["assistant: You asked about 1 + 2."]
    assert texts(await session.get_items()) == [*FIRST_TURN, "user: What did I ask?"]
    await session.clear_session()
    assert await session.get_items() == []
    assert await session.pop_item() is None
    thread = await tk.open_thread(session.session_id)
    assert thread.info.event_count == 0


def test_session_over_a_blocking_thread_runs_in_another_loop() -> None:
    with ThreadKeeper.spawn(binary=BINARY, args=MEMORY_ARGS) as tk:
        skip_unless_blocking_server_has(tk, "responses/toEvents", "thread/pop")
        session = ThreadSession(tk.open_thread("agents-sync"))

        async def run() -> list[str]:
            await two_turns(session)
            return texts(await session.get_items())

        assert asyncio.run(run())[:4] == FIRST_TURN
