"""ThreadSession against the Agents SDK's own SQLiteSession: the same items added, the same items
read back, the same items popped in the same order, on the memory and SQLite stores and through
the blocking client; and a Runner run with a scripted model (offline) on both sessions."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
from agents import Agent, Model, ModelResponse, Runner, Usage, function_tool, set_tracing_disabled
from agents.items import TResponseInputItem, TResponseStreamEvent
from agents.memory import SQLiteSession
from conftest import BINARY, MEMORY_ARGS, skip_unless_server_has
from openai.types.responses import ResponseFunctionToolCall, ResponseOutputMessage, ResponseOutputText, ResponseReasoningItem
from openai.types.responses.response_reasoning_item import Summary

from threadkeeper import AsyncThreadKeeper, ThreadKeeper
from threadkeeper.openai_agents import ThreadSession

set_tracing_disabled(True)  # nothing leaves the machine

#: Every item kind a session stores, in the batches a run adds them in.
BATCHES: list[list[dict[str, Any]]] = [
    [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Weather in Lyon and Paris?"}],
    [
        {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "Two cities."}], "encrypted_content": "gAAAAB-secret=="},
        {"type": "function_call", "id": "fc_1", "call_id": "c1", "name": "weather", "arguments": '{"city": "Lyon"}', "status": "completed"},
        {"type": "function_call", "id": "fc_2", "call_id": "c2", "name": "weather", "arguments": '{"city": "Paris"}', "status": "completed"},
    ],
    [
        {"type": "function_call_output", "call_id": "c1", "output": "sunny"},
        {"type": "function_call_output", "call_id": "c2", "output": "rain"},
    ],
    [
        {"type": "reasoning", "id": "rs_2", "summary": [], "encrypted_content": "gAAAAC-more=="},
        {
            "type": "message",
            "id": "msg_1",
            "role": "assistant",
            "status": "completed",
            "content": [
                {"type": "output_text", "text": "Lyon: sunny. ", "annotations": []},
                {"type": "output_text", "text": "Paris: rain.", "annotations": []},
            ],
        },
    ],
    [{"role": "user", "content": [{"type": "input_text", "text": "And "}, {"type": "input_text", "text": "tomorrow?"}]}],
    [
        {"type": "function_call", "call_id": "c3", "name": "forecast", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "c3", "output": "[Tool call not completed]: gave up"},
        {"type": "web_search_call", "id": "ws_1", "status": "completed", "action": {"type": "search", "query": "lyon"}},
        {"type": "message", "role": "assistant", "content": "No forecast."},
    ],
]

#: The issue's two cases, on their own.
SHORT_CASES: list[list[dict[str, Any]]] = [
    [{"role": "user", "content": "q"}, {"type": "function_call", "call_id": "c1", "name": "t", "arguments": "{}"}, {"type": "function_call_output", "call_id": "c1", "output": "r"}],
    [{"role": "user", "content": "q"}, {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "gAAAA"}, {"role": "assistant", "content": "a"}],
]


async def assert_same_as_reference(ours: Any, reference: SQLiteSession, batches: list[list[dict[str, Any]]]) -> None:
    """Adds the batches to both sessions, then pops item by item: every pop and every read after it agree."""
    for batch in batches:
        await ours.add_items([dict(item) for item in batch])
        await reference.add_items([dict(item) for item in batch])
        assert await ours.get_items() == await reference.get_items()
    for limit in (1, 2, 3, 100):
        assert await ours.get_items(limit=limit) == await reference.get_items(limit=limit), limit
    while True:
        popped, expected = await ours.pop_item(), await reference.pop_item()
        assert popped == expected
        assert await ours.get_items() == await reference.get_items()
        assert await ours.get_items(limit=2) == await reference.get_items(limit=2)
        if expected is None:
            break


@pytest.fixture(params=["memory", "sqlite"])
async def store_client(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[AsyncThreadKeeper]:
    args = MEMORY_ARGS if request.param == "memory" else ["--store", f"sqlite:{tmp_path / 'threads.db'}"]
    client = await AsyncThreadKeeper.spawn(binary=BINARY, args=args, client_info={"name": "threadkeeper-py-tests"})
    try:
        yield client
    finally:
        await client.close()


@pytest.mark.parametrize("batches", [BATCHES, *([case] for case in SHORT_CASES)], ids=["every-kind", "call-output", "reasoning"])
async def test_items_and_pops_match_sqlite_session(store_client: AsyncThreadKeeper, batches: list[list[dict[str, Any]]]) -> None:
    await skip_unless_server_has(store_client, "responses/fromEvents")
    ours = await ThreadSession.open(store_client)
    await assert_same_as_reference(ours, SQLiteSession(f"ref-{ours.session_id}"), batches)


async def test_items_survive_a_restart_of_the_sqlite_store(tmp_path: Path) -> None:
    args = ["--store", f"sqlite:{tmp_path / 'threads.db'}"]
    reference = SQLiteSession("ref")
    async with AsyncThreadKeeper.spawn(binary=BINARY, args=args) as tk:
        await skip_unless_server_has(tk, "responses/fromEvents")
        session = await ThreadSession.open(tk, "kept")
        for batch in BATCHES:
            await session.add_items([dict(item) for item in batch])
            await reference.add_items([dict(item) for item in batch])
    async with AsyncThreadKeeper.spawn(binary=BINARY, args=args) as tk:
        await assert_same_as_reference(await ThreadSession.open(tk, "kept"), reference, [])


def test_blocking_thread_matches_sqlite_session() -> None:
    with ThreadKeeper.spawn(binary=BINARY, args=MEMORY_ARGS) as tk:
        try:
            tk.request("responses/fromEvents", {})
        except Exception as error:  # -32601 on a server without it
            if "not found" in str(error).lower():
                pytest.skip("the server under test has no responses/fromEvents")
        session = ThreadSession(tk.open_thread("agents-blocking"))

        async def run() -> None:
            await assert_same_as_reference(session, SQLiteSession("ref"), BATCHES)

        asyncio.run(run())


async def test_old_threads_read_as_rendered(tk: AsyncThreadKeeper) -> None:
    """Events written without kept items (an earlier version's session) read as the render gives
    them, and pop as before; items added after them are read back as added."""
    await skip_unless_server_has(tk, "responses/fromEvents")
    thread = await tk.open_thread("old")
    await thread.append(await tk.responses_to_events([{"role": "user", "content": "q"}, {"type": "function_call", "call_id": "c1", "name": "t", "arguments": "{}"}]))
    session = ThreadSession(thread)
    old = [{"type": "message", "role": "user", "content": "q"}, {"type": "function_call", "call_id": "c1", "name": "t", "arguments": "{}"}]
    repaired = {"type": "function_call_output", "call_id": "c1", "output": "[Tool call not completed]: no result was recorded for this call"}
    assert await session.get_items() == [*old, repaired]
    new = {"type": "function_call_output", "call_id": "c1", "output": "done"}
    await session.add_items([new])  # type: ignore[list-item]
    assert await session.get_items() == [*old, repaired, new]
    assert await session.pop_item() == new
    assert await session.pop_item() == repaired
    assert await session.get_items() == old[:1]


#: Items of the TypeScript SDK (its camelCase form), each with the wire item this session reads it as.
TS_ITEMS: list[tuple[dict[str, Any], dict[str, Any]]] = [
    # A user message's form is a wire form too: it reads as it is.
    ({"type": "message", "role": "user", "content": "Weather in Lyon?"}, {"type": "message", "role": "user", "content": "Weather in Lyon?"}),
    (
        {"type": "reasoning", "content": [{"type": "input_text", "text": "One city."}], "providerData": {"encryptedContent": "gAAAAB=="}},
        {"type": "reasoning", "summary": [{"type": "summary_text", "text": "One city."}], "encrypted_content": "gAAAAB=="},
    ),
    (
        {"type": "function_call", "id": "fc_1", "callId": "c1", "name": "weather", "arguments": '{"city":"Lyon"}', "status": "completed"},
        {"type": "function_call", "id": "fc_1", "call_id": "c1", "name": "weather", "arguments": '{"city":"Lyon"}', "status": "completed"},
    ),
    (
        {"type": "function_call_result", "callId": "c1", "name": "weather", "status": "completed", "output": {"type": "text", "text": "sunny"}},
        {"type": "function_call_output", "call_id": "c1", "output": "sunny", "status": "completed"},
    ),
    (
        {"type": "message", "role": "assistant", "status": "completed", "content": [{"type": "output_text", "text": "Sunny."}], "providerData": {"phase": "final_answer"}},
        {"type": "message", "role": "assistant", "status": "completed", "phase": "final_answer", "content": [{"type": "output_text", "text": "Sunny.", "annotations": []}]},
    ),
    (
        {"type": "hosted_tool_call", "id": "ws_1", "name": "web_search_call", "status": "completed", "providerData": {"type": "web_search_call", "action": {"type": "search", "query": "lyon"}}},
        {"type": "web_search_call", "id": "ws_1", "status": "completed", "action": {"type": "search", "query": "lyon"}},
    ),
]


async def test_items_the_typescript_client_kept_in_its_sdk_form_read_as_wire_items(tk: AsyncThreadKeeper) -> None:
    """A session thread an earlier TypeScript client wrote keeps that SDK's camelCase items: they
    read as their wire items, pop as such, and items added after them read back as added."""
    await skip_unless_server_has(tk, "responses/fromEvents")
    thread = await tk.open_thread("ts-old")
    events = (await tk.request("responses/toEvents", {"items": [wire for _, wire in TS_ITEMS], "keepItems": True}))["events"]
    items = iter(ts for ts, _ in TS_ITEMS)
    for event in events:  # as that client wrote them: every event that gives an item keeps the SDK's item
        if event.get("responsesItem", True) is not None:
            event["responsesItem"] = next(items)
    await thread.append(events)
    session = ThreadSession(thread)
    wire = [wire for _, wire in TS_ITEMS]
    assert await session.get_items() == wire
    assert await session.get_items(limit=2) == wire[-2:]
    added = {"type": "function_call_output", "call_id": "c2", "output": "rain"}
    await session.add_items([added])  # type: ignore[list-item]
    assert await session.pop_item() == added
    assert await session.pop_item() == wire[-1]
    assert await session.get_items() == wire[:-1]


async def test_what_the_typescript_client_keeps_beside_an_item_is_left_alone(tk: AsyncThreadKeeper) -> None:
    """The TypeScript client keeps its SDK's extra fields on the event (``agentsJs``); this session
    reads the wire item and pops it with its event."""
    await skip_unless_server_has(tk, "responses/fromEvents")
    thread = await tk.open_thread("ts-new")
    wire = [item for _, item in TS_ITEMS]
    events = (await tk.request("responses/toEvents", {"items": wire, "keepItems": True}))["events"]
    for event in events:
        event["agentsJs"] = {"set": {"name": "weather"}}
    await thread.append(events)
    session = ThreadSession(thread)
    assert await session.get_items() == wire
    assert await session.pop_item() == wire[-1]
    assert await session.get_items() == wire[:-1]


# ---- the SDK's Runner with a scripted model, on both sessions ----


class ScriptedModel(Model):
    """Answers each model call with the next scripted output and records the input it was given."""

    def __init__(self, outputs: list[list[Any]]) -> None:
        self.outputs = outputs
        self.inputs: list[list[TResponseInputItem]] = []

    async def get_response(self, system_instructions: Any, input: Any, *args: Any, **kwargs: Any) -> ModelResponse:
        self.inputs.append([input] if isinstance(input, str) else json.loads(json.dumps(list(input))))
        return ModelResponse(output=self.outputs.pop(0), usage=Usage(), response_id=None)

    def stream_response(self, *args: Any, **kwargs: Any) -> AsyncIterator[TResponseStreamEvent]:
        raise NotImplementedError


@function_tool
def weather(city: str) -> str:
    """The weather in a city."""
    return {"Lyon": "sunny", "Paris": "rain"}.get(city, "unknown")


def script() -> list[list[Any]]:
    def call(city: str, n: int) -> ResponseFunctionToolCall:
        return ResponseFunctionToolCall(type="function_call", name="weather", arguments=json.dumps({"city": city}), call_id=f"c{n}", id=f"fc_{n}", status="completed")

    def say(text: str, n: int) -> ResponseOutputMessage:
        parts = [ResponseOutputText(type="output_text", text=part, annotations=[]) for part in text.split("|")]
        return ResponseOutputMessage(id=f"msg_{n}", type="message", role="assistant", status="completed", content=parts)  # type: ignore[arg-type]

    def think(n: int) -> ResponseReasoningItem:
        return ResponseReasoningItem(id=f"rs_{n}", type="reasoning", summary=[Summary(type="summary_text", text=f"step {n}")], encrypted_content=f"gAAAA{n}==")

    return [
        [think(1), call("Lyon", 1), call("Paris", 2)],
        [think(2), say("Lyon is sunny, |Paris has rain.", 1)],
        [say("You asked about Lyon and Paris.", 2)],
    ]


async def run_twice(session: Any) -> ScriptedModel:
    model = ScriptedModel(script())
    agent = Agent(name="weather", instructions="Use the tools.", model=model, tools=[weather])
    await Runner.run(agent, "Weather in Lyon and Paris?", session=session)
    await Runner.run(agent, "What did I ask?", session=session)
    return model


async def test_runner_on_both_sessions_sees_and_keeps_the_same_items(tk: AsyncThreadKeeper) -> None:
    await skip_unless_server_has(tk, "responses/fromEvents")
    ours, reference = await ThreadSession.open(tk), SQLiteSession("ref-runner")
    our_model, reference_model = await run_twice(ours), await run_twice(reference)
    assert our_model.inputs == reference_model.inputs
    items = await reference.get_items()
    assert [item.get("type", "message") for item in items] == [
        "message", "reasoning", "function_call", "function_call", "function_call_output", "function_call_output",
        "reasoning", "message", "message", "message",
    ]
    await assert_same_as_reference(ours, reference, [])


async def test_runner_model_input_is_the_render_of_the_same_items(tk: AsyncThreadKeeper) -> None:
    """The thread's render (the model input a host builds from the thread) is what it was for the
    same items before items were kept: the conversion without keepItems."""
    await skip_unless_server_has(tk, "responses/fromEvents")
    session = await ThreadSession.open(tk)
    await run_twice(session)
    thread = await tk.open_thread(session.session_id)
    plain = await tk.open_thread()
    await plain.append(await tk.responses_to_events([dict(item) for item in await session.get_items()]))
    strip: Callable[[dict[str, Any]], dict[str, Any]] = lambda r: {k: v for k, v in r.items() if k != "version"}
    for render in ("openai-responses", "openai-chat", "anthropic", "messages"):
        assert strip(await thread.render(render)) == strip(await plain.render(render)), render  # type: ignore[arg-type]


# ---- images and files ----

#: A 2 × 1 PNG and a tiny PDF, as base64.
PNG = "iVBORw0KGgoAAAANSUhEUgAAAAIAAAABCAIAAAB7QOjdAAAADUlEQVR4nGP4z8AARAAI/gH/xp559wAAAABJRU5ErkJggg=="
PDF = "JVBERi0xLjQKMSAwIG9iajw8Pj5lbmRvYmoKdHJhaWxlcjw8Pj4KJSVFT0YK"

#: Images and files: data URLs, a provider's file id, a URL, and a tool output of parts.
MEDIA_BATCHES: list[list[dict[str, Any]]] = [
    [
        {
            "role": "user",
            "content": [
                {"type": "input_text", "text": "What is in these?"},
                {"type": "input_image", "image_url": f"data:image/png;base64,{PNG}", "detail": "auto"},
                {"type": "input_file", "file_data": f"data:application/pdf;base64,{PDF}", "filename": "r.pdf"},
                {"type": "input_image", "file_id": "file-abc", "detail": "high"},
                {"type": "input_image", "image_url": "https://example.com/a.png", "detail": "low"},
                {"type": "input_file", "file_url": "https://example.com/b.pdf"},
            ],
        }
    ],
    [
        {"type": "function_call", "call_id": "c1", "name": "chart", "arguments": "{}"},
        {
            "type": "function_call_output",
            "call_id": "c1",
            "output": [
                {"type": "input_text", "text": "the chart"},
                {"type": "input_image", "image_url": f"data:image/png;base64,{PNG}"},
                {"type": "input_file", "file_data": f"data:application/pdf;base64,{PDF}", "filename": "c.pdf"},
            ],
        },
    ],
]


async def test_images_and_files_match_sqlite_session_and_are_blobs(store_client: AsyncThreadKeeper) -> None:
    await skip_unless_server_has(store_client, "responses/fromEvents")
    ours = await ThreadSession.open(store_client)
    await assert_same_as_reference(ours, SQLiteSession(f"ref-{ours.session_id}"), MEDIA_BATCHES)
    session = await ThreadSession.open(store_client)
    for batch in MEDIA_BATCHES:
        await session.add_items([dict(item) for item in batch])  # type: ignore[misc]
    events = json.dumps(await (await store_client.open_thread(session.session_id)).events())
    assert PNG not in events and PDF not in events
    assert await session.get_items() == [item for batch in MEDIA_BATCHES for item in batch]


@function_tool
def chart() -> Any:
    """Draws a chart."""
    from agents import ToolOutputImage, ToolOutputText

    return [ToolOutputText(text="the chart"), ToolOutputImage(image_url=f"data:image/png;base64,{PNG}")]


async def test_runner_with_an_image_in_and_an_image_tool_output_keeps_the_same_items(tk: AsyncThreadKeeper) -> None:
    await skip_unless_server_has(tk, "responses/fromEvents")

    def outputs() -> list[list[Any]]:
        call = ResponseFunctionToolCall(type="function_call", name="chart", arguments="{}", call_id="c1", id="fc_1", status="completed")
        answer = ResponseOutputMessage(id="msg_1", type="message", role="assistant", status="completed", content=[ResponseOutputText(type="output_text", text="A red chart.", annotations=[])])
        return [[call], [answer]]

    async def run(session: Any) -> ScriptedModel:
        model = ScriptedModel(outputs())
        agent = Agent(name="charts", instructions="Draw.", model=model, tools=[chart])
        await Runner.run(agent, json.loads(json.dumps(MEDIA_BATCHES[0])), session=session)
        return model

    ours, reference = await ThreadSession.open(tk), SQLiteSession("ref-media-runner")
    our_model, reference_model = await run(ours), await run(reference)
    assert our_model.inputs == reference_model.inputs
    items = await reference.get_items()
    assert PNG in json.dumps(items[-2]), "the tool's image is in its output item"
    await assert_same_as_reference(ours, reference, [])
