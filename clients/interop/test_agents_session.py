"""One OpenAI Agents SDK session, taken in turns by the TypeScript and the Python SDK, on one
SQLite thread kept by the real binary.

The TypeScript turns run in node (clients/typescript/interop/agents-session-step.ts, built into
build-test/); the Python turns run here. Both use the SDK's own Runner with a scripted model, so
nothing leaves the machine. Each SDK's ``get_items`` gives the items the other added in the wire
form, and its own items exactly as added. Run by scripts/test (after both clients' suites).
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
from pathlib import Path
from typing import Any

from agents import Agent, Model, ModelResponse, Runner, Usage, function_tool, set_tracing_disabled
from agents.items import TResponseInputItem
from openai.types.responses import ResponseFunctionToolCall, ResponseOutputMessage, ResponseOutputText, ResponseReasoningItem
from openai.types.responses.response_reasoning_item import Summary

from threadkeeper import AsyncThread, AsyncThreadKeeper
from threadkeeper.discovery import find_binary
from threadkeeper.openai_agents import ThreadSession

set_tracing_disabled(True)  # nothing leaves the machine

TYPESCRIPT = Path(__file__).resolve().parent.parent / "typescript"
STEP = TYPESCRIPT / "build-test" / "interop" / "agents-session-step.js"
BINARY = find_binary()


def typescript_step(step: str, db: Path, thread_id: str) -> dict[str, Any]:
    """Runs one TypeScript turn in node and returns what it reports."""
    env = {**os.environ, "THREADKEEPER_BIN": BINARY}
    # Bounded, so a turn that hangs fails here (TimeoutExpired) rather than holding the test.
    done = subprocess.run(
        ["node", str(STEP), step, str(db), thread_id], capture_output=True, text=True, env=env, check=False, timeout=60
    )
    assert done.returncode == 0, done.stderr
    result: dict[str, Any] = json.loads(done.stdout)
    return result


class NotingSession(ThreadSession):
    """A ThreadSession that notes the items the SDK adds, as it adds them."""

    def __init__(self, thread: AsyncThread) -> None:
        super().__init__(thread)
        self.added: list[Any] = []

    async def add_items(self, items: list[TResponseInputItem]) -> None:
        self.added.extend(json.loads(json.dumps(items)))
        await super().add_items(items)


class ScriptedModel(Model):
    """Answers each model call with the next scripted output and notes the input it was given."""

    def __init__(self, outputs: list[list[Any]]) -> None:
        self.outputs = outputs
        self.inputs: list[list[Any]] = []

    async def get_response(self, system_instructions: Any, input: Any, *args: Any, **kwargs: Any) -> ModelResponse:
        self.inputs.append([input] if isinstance(input, str) else json.loads(json.dumps(list(input))))
        return ModelResponse(output=self.outputs.pop(0), usage=Usage(), response_id=None)

    def stream_response(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError


@function_tool
def weather(city: str) -> str:
    """The weather in a city."""
    return {"Lyon": "sunny", "Paris": "rain"}.get(city, "unknown")


def python_script() -> list[list[Any]]:
    """Reasoning and a tool call, then reasoning and an answer."""
    return [
        [
            ResponseReasoningItem(id="rs_py1", type="reasoning", summary=[Summary(type="summary_text", text="Paris now.")], encrypted_content="gAAAApy1=="),
            ResponseFunctionToolCall(type="function_call", name="weather", arguments='{"city": "Paris"}', call_id="call_py1", id="fc_py1", status="completed"),
        ],
        [
            ResponseReasoningItem(id="rs_py2", type="reasoning", summary=[], encrypted_content="gAAAApy2=="),
            ResponseOutputMessage(id="msg_py1", type="message", role="assistant", status="completed", content=[ResponseOutputText(type="output_text", text="Paris has rain.", annotations=[])]),
        ],
    ]


async def python_turn(db: Path, thread_id: str, typescript_wire: list[Any]) -> tuple[list[Any], list[list[Any]]]:
    """The Python SDK's turn: it reads the TypeScript items as wire items, runs, and pops its last item."""
    async with AsyncThreadKeeper.spawn(binary=BINARY, args=["--store", f"sqlite:{db}"]) as tk:
        session = NotingSession(await tk.open_thread(thread_id))
        assert await session.get_items() == typescript_wire
        model = ScriptedModel(python_script())
        agent = Agent(name="weather", instructions="Use the tools.", model=model, tools=[weather])
        result = await Runner.run(agent, "And Paris?", session=session)
        assert result.final_output == "Paris has rain."
        added = session.added
        assert [item.get("type") for item in added] == [None, "reasoning", "function_call", "function_call_output", "reasoning", "message"]
        assert await session.get_items() == [*typescript_wire, *added]
        assert await session.get_items(limit=3) == added[-3:]
        assert await session.pop_item() == added[-1]
        assert await session.get_items() == [*typescript_wire, *added[:-1]]
        return added[:-1], model.inputs


def test_one_session_taken_in_turns(tmp_path: Path) -> None:
    db, thread_id = tmp_path / "threads.db", "shared-run"

    # TypeScript begins: a tool call and its answer; its items come back exactly.
    first = typescript_step("begin", db, thread_id)
    assert [item["type"] for item in first["added"]] == ["message", "function_call", "function_call_result", "message"]
    assert first["read"] == first["added"]

    # Python goes on: it reads them as the wire items they are, adds reasoning, a call, its output
    # and an answer, and pops the answer.
    python_items, python_inputs = asyncio.run(python_turn(db, thread_id, first["addedWire"]))
    assert python_inputs[0] == [*first["addedWire"], {"content": "And Paris?", "role": "user"}]

    # TypeScript goes on: its own items exactly, Python's as the SDK reads those wire items.
    second = typescript_step("continue", db, thread_id)
    before = second["before"]
    assert before[: len(first["added"])] == first["added"]
    assert second["beforeWire"][len(first["added"]) :] == [_as_the_sdk_sends(item) for item in python_items]
    assert second["modelInputs"][0][: len(before)] == before
    assert [item["type"] for item in second["added"]] == ["message", "message"]
    assert second["read"] == [*before, *second["added"]]

    # And Python reads the whole session: TypeScript's items as wire items, its own as added.
    async def read_all() -> list[Any]:
        async with AsyncThreadKeeper.spawn(binary=BINARY, args=["--store", f"sqlite:{db}"]) as tk:
            return await ThreadSession(await tk.open_thread(thread_id)).get_items()

    assert asyncio.run(read_all()) == [*first["addedWire"], *python_items, *second["addedWire"]]

    # Both number the turns alike: each run that starts with a user message opens an iteration.
    async def iterations() -> list[Any]:
        async with AsyncThreadKeeper.spawn(binary=BINARY, args=["--store", f"sqlite:{db}"]) as tk:
            return [event.get("iteration") for event in await (await tk.open_thread(thread_id)).events()]

    assert asyncio.run(iterations()) == [0] * 4 + [1] * len(python_items) + [2] * 2


def test_a_session_python_begins_goes_on_in_typescript(tmp_path: Path) -> None:
    db, thread_id = tmp_path / "threads.db", "python-first"

    # Python begins: a tool call and its answer.
    async def begin() -> list[Any]:
        async with AsyncThreadKeeper.spawn(binary=BINARY, args=["--store", f"sqlite:{db}"]) as tk:
            session = NotingSession(await tk.open_thread(thread_id))
            model = ScriptedModel(
                [
                    [ResponseFunctionToolCall(type="function_call", name="weather", arguments='{"city": "Lyon"}', call_id="call_py1", id="fc_py1", status="completed")],
                    [ResponseOutputMessage(id="msg_py1", type="message", role="assistant", status="completed", content=[ResponseOutputText(type="output_text", text="Sunny.", annotations=[])])],
                ]
            )
            await Runner.run(Agent(name="weather", instructions="Use the tools.", model=model, tools=[weather]), "Weather in Lyon?", session=session)
            assert await session.get_items() == session.added
            return session.added

    python_items = asyncio.run(begin())

    # TypeScript goes on with reasoning and an answer, and pops the answer: it read Python's items
    # as the SDK reads those wire items, and its own come back exactly.
    turn = typescript_step("reason-and-pop", db, thread_id)
    assert turn["beforeWire"] == [_as_the_sdk_sends(item) for item in python_items]
    assert turn["modelInputs"][0][: len(turn["before"])] == turn["before"]
    assert [item["type"] for item in turn["added"]] == ["message", "reasoning", "message"]
    assert turn["read"] == [*turn["before"], *turn["added"]]
    assert turn["popped"] == turn["added"][-1]
    assert turn["readAfterPop"] == [*turn["before"], *turn["added"][:-1]]

    # Python reads the session: its own items as added, TypeScript's in the wire form.
    async def read_all() -> list[Any]:
        async with AsyncThreadKeeper.spawn(binary=BINARY, args=["--store", f"sqlite:{db}"]) as tk:
            return await ThreadSession(await tk.open_thread(thread_id)).get_items()

    assert asyncio.run(read_all()) == [*python_items, *turn["addedWire"][:-1]]


def test_a_session_the_typescript_client_kept_in_its_sdk_form_reads_in_both(tmp_path: Path) -> None:
    db, thread_id = tmp_path / "threads.db", "old-form"
    old = typescript_step("old-form", db, thread_id)
    assert old["read"] == old["added"]

    async def read_all() -> list[Any]:
        async with AsyncThreadKeeper.spawn(binary=BINARY, args=["--store", f"sqlite:{db}"]) as tk:
            return await ThreadSession(await tk.open_thread(thread_id)).get_items()

    items = asyncio.run(read_all())
    # The user message's SDK form is a wire form too, so it reads as it is.
    assert items == [old["added"][0], *old["addedWire"][1:]]


#: A 2 × 1 PNG, as base64.
PNG = "iVBORw0KGgoAAAANSUhEUgAAAAIAAAABCAIAAAB7QOjdAAAADUlEQVR4nGP4z8AARAAI/gH/xp559wAAAABJRU5ErkJggg=="

#: A user message with an image (a data URL) and a tool output holding one, as the Python SDK holds them.
PYTHON_MEDIA: list[dict[str, Any]] = [
    {"role": "user", "content": [{"type": "input_text", "text": "And this?"}, {"type": "input_image", "image_url": f"data:image/png;base64,{PNG}", "detail": "high"}]},
    {"type": "function_call", "call_id": "c_py_img", "name": "chart", "arguments": "{}"},
    {"type": "function_call_output", "call_id": "c_py_img", "output": [{"type": "input_text", "text": "a chart"}, {"type": "input_image", "image_url": f"data:image/png;base64,{PNG}", "detail": "low"}]},
]


def test_images_written_by_one_sdk_read_the_same_in_the_other(tmp_path: Path) -> None:
    db = tmp_path / "threads.db"

    # TypeScript writes an image and a tool output with one; Python reads the wire items, bytes and all.
    written = typescript_step("media-write", db, "ts-media")

    async def python_reads(thread_id: str) -> tuple[list[Any], str]:
        async with AsyncThreadKeeper.spawn(binary=BINARY, args=["--store", f"sqlite:{db}"]) as tk:
            thread = await tk.open_thread(thread_id)
            return await ThreadSession(thread).get_items(), json.dumps(await thread.events())

    items, events = asyncio.run(python_reads("ts-media"))
    assert items == written["addedWire"]
    assert PNG in json.dumps(items) and PNG not in events

    # Python writes the same kinds; TypeScript reads them as the SDK reads those wire items.
    async def python_writes() -> None:
        async with AsyncThreadKeeper.spawn(binary=BINARY, args=["--store", f"sqlite:{db}"]) as tk:
            await ThreadSession(await tk.open_thread("py-media")).add_items(json.loads(json.dumps(PYTHON_MEDIA)))

    asyncio.run(python_writes())
    read = typescript_step("read", db, "py-media")
    assert read["readWire"] == [_as_the_sdk_sends(item) for item in PYTHON_MEDIA]
    assert PNG in json.dumps(read["read"])
    assert asyncio.run(python_reads("py-media"))[0] == PYTHON_MEDIA


def _as_the_sdk_sends(item: dict[str, Any]) -> dict[str, Any]:
    """A Python item as the TypeScript SDK sends it back: a function output gains its default status."""
    return {**item, "status": "completed"} if item.get("type") == "function_call_output" else item
