"""Pydantic AI's own agent loop (``Agent`` on ``FunctionModel``, offline) with its history kept in a
thread: each run appended with ``append_model_messages``, the next one continued from
``to_model_messages``, which must give the model exactly what Pydantic AI's own history gives it."""

from __future__ import annotations

import asyncio
import base64
import json
from collections.abc import Sequence
from typing import Any, Literal

import pytest
from conftest import BINARY, MEMORY_ARGS, skip_unless_blocking_server_has, skip_unless_server_has
from pydantic import BaseModel
from pydantic_ai import Agent, ModelRetry
from pydantic_ai.messages import (
    AudioUrl,
    BinaryContent,
    DocumentUrl,
    ImageUrl,
    ModelMessage,
    ModelMessagesTypeAdapter,
    ModelRequest,
    ModelResponse,
    SystemPromptPart,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolReturnPart,
    UserContent,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel

from threadkeeper import AsyncThreadKeeper, ErrorCode, ThreadKeeper, ThreadKeeperError
from threadkeeper.pydantic_ai import append_model_messages, append_model_messages_sync, to_model_messages, to_model_messages_sync


class Forecast(BaseModel):
    city: str
    sky: str


def dump(messages: list[ModelMessage]) -> list[dict[str, Any]]:
    """Messages as ``ModelMessagesTypeAdapter`` writes them."""
    dumped: list[dict[str, Any]] = json.loads(ModelMessagesTypeAdapter.dump_json(messages))
    return dumped


class Script:
    """The model: answers by what the conversation holds so far, and records every input it gets."""

    def __init__(self) -> None:
        self.inputs: list[list[dict[str, Any]]] = []

    def __call__(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        self.inputs.append(dump(messages))
        last = messages[-1]
        returns = [p for p in last.parts if p.part_kind == "tool-return"]
        if info.output_tools:  # the JSON turn: answer through the output tool
            if not returns:
                return ModelResponse(parts=[ToolCallPart(info.output_tools[0].name, {"city": "Zürich", "sky": "sonnig ☀"}, tool_call_id="out1")])
            return ModelResponse(parts=[TextPart("unreachable")])
        if not returns:
            return ModelResponse(
                parts=[
                    TextPart("Ich schaue nach… 🌦"),
                    ToolCallPart("weather", {"city": "Zürich"}, tool_call_id="w1"),
                    ToolCallPart("weather", {"city": "東京"}, tool_call_id="w2"),
                    ToolCallPart("flaky", {"n": 1}, tool_call_id="f1"),
                ]
            )
        if any(p.tool_name == "flaky" and p.outcome == "retried" for p in returns):
            return ModelResponse(parts=[ToolCallPart("flaky", {"n": 2}, tool_call_id="f2")])
        return ModelResponse(parts=[TextPart("Zürich: sonnig ☀, 東京: 晴れ")])


def agents(script: Script) -> tuple[Agent[None, str], Agent[None, Forecast]]:
    text_agent: Agent[None, str] = Agent(FunctionModel(script), instructions="Be brief.", system_prompt="You are a weather bot.")

    @text_agent.tool_plain
    def weather(city: str) -> str:
        return f"sunny in {city}"

    @text_agent.tool_plain
    def flaky(n: int) -> dict[str, Any]:
        if n == 1:
            raise ModelRetry("n must be 2")
        return {"ok": True, "n": n, "ratio": 0.5}

    json_agent: Agent[None, Forecast] = Agent(FunctionModel(script), output_type=Forecast, instructions="Answer as JSON.")
    return text_agent, json_agent


def without_run_stamps(message: dict[str, Any]) -> dict[str, Any]:
    """A new request as two runs make it: the same but for when and in which run."""

    def strip(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: strip(v) for k, v in value.items() if k not in ("timestamp", "run_id", "conversation_id")}
        if isinstance(value, list):
            return [strip(v) for v in value]
        return value

    return strip(message)  # type: ignore[no-any-return]


def assert_same_model_input(from_thread: list[dict[str, Any]], from_framework: list[dict[str, Any]]) -> None:
    """The history part exactly equal; the request the new run adds equal but for its stamps."""
    assert from_thread[:-1] == from_framework[:-1]
    assert without_run_stamps(from_thread[-1]) == without_run_stamps(from_framework[-1])


async def test_runs_kept_in_a_thread_read_back_equal_and_continue_identically(tk: AsyncThreadKeeper) -> None:
    await skip_unless_server_has(tk, "pydanticAi/toEvents")
    script = Script()
    text_agent, json_agent = agents(script)
    thread = await tk.open_thread("pydantic-ai")

    first = await text_agent.run("Wetter in Zürich und 東京?")
    assert first.output == "Zürich: sonnig ☀, 東京: 晴れ"
    kinds = [p.part_kind for m in first.all_messages() for p in m.parts]
    assert kinds.count("tool-call") == 4 and kinds.count("tool-return") == 4
    await append_model_messages(thread, first.new_messages())
    assert dump(await to_model_messages(thread)) == dump(first.all_messages())

    # The next turn, continued from the thread and from Pydantic AI's own history.
    script.inputs.clear()
    from_thread = await json_agent.run("Und als JSON?", message_history=await to_model_messages(thread))
    thread_inputs = script.inputs[:]
    script.inputs.clear()
    from_framework = await json_agent.run("Und als JSON?", message_history=first.all_messages())
    assert from_thread.output == from_framework.output == Forecast(city="Zürich", sky="sonnig ☀")
    assert len(thread_inputs) == len(script.inputs) == 1
    assert_same_model_input(thread_inputs[0], script.inputs[0])

    await append_model_messages(thread, from_thread.new_messages())
    assert dump(await to_model_messages(thread)) == dump(from_thread.all_messages())

    events = await thread.events()
    assert {e["iteration"] for e in events[:10]} == {0} and events[-1]["iteration"] == 1
    xml = (await thread.render_xml()).split("\n")
    calls = [line for line in xml if 'type="tool_input"' in line]
    assert [c.split('name="')[1].split('"')[0] for c in calls] == ["weather", "weather", "flaky", "flaky", "final_result"]
    assert any('type="error"' in line and "n must be 2" in line for line in xml)
    assert any("東京" in line for line in calls)


async def test_an_async_helper_takes_a_blocking_thread_and_appends_all_or_nothing(tk: AsyncThreadKeeper) -> None:
    await skip_unless_server_has(tk, "pydanticAi/toEvents")
    text_agent, _ = agents(Script())
    result = await text_agent.run("Wetter?")
    thread = await tk.open_thread("pydantic-ai-versions")
    appended = await append_model_messages(thread, result.new_messages(), iteration=7, expected_version=0)
    assert appended is not None and appended.version == 1
    assert {e["iteration"] for e in await thread.events()} == {7}
    assert await append_model_messages(thread, []) is None
    with pytest.raises(ThreadKeeperError) as stale:  # the version moved on: nothing is appended
        await append_model_messages(thread, result.new_messages(), expected_version=0)
    assert stale.value.code == ErrorCode.VERSION_CONFLICT
    assert dump(await to_model_messages(thread)) == dump(result.all_messages())


def test_the_blocking_client_keeps_a_run_and_continues_it() -> None:
    with ThreadKeeper.spawn(binary=BINARY, args=MEMORY_ARGS) as tk:
        skip_unless_blocking_server_has(tk, "pydanticAi/toEvents")
        script = Script()
        text_agent, json_agent = agents(script)
        thread = tk.open_thread("pydantic-ai-sync")
        first = text_agent.run_sync("Wetter in Zürich und 東京?")
        append_model_messages_sync(thread, first.new_messages())
        history = to_model_messages_sync(thread)
        assert dump(history) == dump(first.all_messages())
        second = json_agent.run_sync("Und als JSON?", message_history=history)
        append_model_messages_sync(thread, second.new_messages())
        assert dump(to_model_messages_sync(thread)) == dump(second.all_messages())

        # The async helpers run on a blocking thread from the caller's own loop too.
        async def read() -> list[ModelMessage]:
            return await to_model_messages(thread)

        assert dump(asyncio.run(read())) == dump(second.all_messages())


async def test_render_options_apply(tk: AsyncThreadKeeper) -> None:
    await skip_unless_server_has(tk, "pydanticAi/toEvents")
    text_agent, _ = agents(Script())
    result = await text_agent.run("Wetter?")
    thread = await tk.open_thread("pydantic-ai-options")
    # The run as far as the model's parallel calls: the thread answers them as interrupted.
    await append_model_messages(thread, result.all_messages()[:2])
    history = await to_model_messages(thread, instructions="Antworte auf Deutsch.")
    first = history[0].parts[0]
    assert isinstance(first, SystemPromptPart) and first.content == "Antworte auf Deutsch."
    answers = [p for p in history[-1].parts if isinstance(p, ToolReturnPart)]
    assert [p.outcome for p in answers] == ["interrupted"] * 3
    dropped = await to_model_messages(thread, dangling_tool_calls="drop")
    assert [p.part_kind for p in dropped[-1].parts] == ["text"]
    xml = await to_model_messages(thread, context_mode="xml")
    document = xml[0].parts[-1]
    assert len(xml) == 1 and isinstance(document, UserPromptPart) and str(document.content).startswith("<thread>")


def test_every_fixture_thread_is_a_history_pydantic_ai_accepts() -> None:
    """The shared provider fixtures (parallel calls, errors, interrupts, summaries, reasoning, …),
    in both context modes: read by ``ModelMessagesTypeAdapter``, requests and responses
    alternating, each call answered in the next request, and an agent runs on them."""
    from provider_fixtures import load_fixtures, open_fixture

    script = Script()
    text_agent, _ = agents(script)
    with ThreadKeeper.spawn(binary=BINARY, args=MEMORY_ARGS) as tk:
        skip_unless_blocking_server_has(tk, "pydanticAi/toEvents")
        for fixture in load_fixtures():
            thread = open_fixture(tk, fixture)
            for mode in ("standard", "xml"):
                history = to_model_messages_sync(thread, context_mode=mode)
                open_calls: set[str] = set()
                for i, message in enumerate(history):
                    assert message.kind == ("request" if i % 2 == 0 else "response"), (fixture.name, mode, i)
                    answered = {p.tool_call_id for p in message.parts if isinstance(p, ToolReturnPart)}
                    assert answered == open_calls, (fixture.name, mode, i)
                    open_calls = {p.tool_call_id for p in message.parts if isinstance(p, ToolCallPart)}
                assert not open_calls, (fixture.name, mode)
                script.inputs.clear()
                text_agent.run_sync("Weiter?", message_history=history)
                # The model gets every part of the history (Pydantic AI puts returns in call order,
                # and a history ending in a request takes the new prompt there).
                for kept, received in zip(dump(history), script.inputs[0]):
                    sent = [json.dumps(p, sort_keys=True) for p in received["parts"]]
                    assert all(json.dumps(p, sort_keys=True) in sent for p in kept["parts"]), (fixture.name, mode)


PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x01\x02\x03"
PDF = "%PDF-1.4\n% threadkeeper ✓\n".encode()
WAV = b"RIFF$\x00\x00\x00WAVEfmt \x09\x08"


class MediaScript:
    """A model that calls the `page` tool once, then answers; records what it is given."""

    def __init__(self, thinking: list[ThinkingPart] | None = None) -> None:
        self.inputs: list[list[dict[str, Any]]] = []
        self.thinking = thinking or []

    def __call__(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        self.inputs.append(dump(messages))
        if not any(p.part_kind == "tool-return" for m in messages for p in m.parts):
            return ModelResponse(parts=[*self.thinking, ToolCallPart("page", {"n": 2}, tool_call_id="p1")])
        return ModelResponse(parts=[TextPart("A PNG, a PDF and a WAV ✓")])


def media_agent(script: MediaScript) -> Agent[None, str]:
    agent: Agent[None, str] = Agent(FunctionModel(script))

    @agent.tool_plain
    def page(n: int) -> BinaryContent:  # Pydantic AI moves the file into a user prompt
        return BinaryContent(data=PNG, media_type="image/png")

    return agent


def assert_bytes_as_blobs(events: Sequence[Any]) -> None:
    text = json.dumps(events)
    for data in (PNG, PDF, WAV):
        assert base64.b64encode(data).decode() not in text
    assert '"blob": "sha256:' in text


async def test_media_in_prompts_and_tool_returns_read_back_equal(tk: AsyncThreadKeeper) -> None:
    await skip_unless_server_has(tk, "pydanticAi/toEvents")
    script = MediaScript()
    thread = await tk.open_thread("pydantic-ai-media")
    prompt: list[UserContent] = [
        "What is on these? ✓",
        BinaryContent(data=PNG, media_type="image/png"),
        BinaryContent(data=PDF, media_type="application/pdf", identifier="report"),
        BinaryContent(data=WAV, media_type="audio/wav"),
        ImageUrl(url="https://example.com/cat.png"),
        DocumentUrl(url="https://example.com/a.pdf"),
        AudioUrl(url="https://example.com/b.wav"),
    ]
    result = await media_agent(script).run(prompt)
    # The model saw the tool's image in the request after the call.
    returns = [part for m in script.inputs[-1] for part in m["parts"] if part["part_kind"] == "tool-return"]
    assert [r["content"]["kind"] for r in returns] == ["binary"]
    await append_model_messages(thread, result.new_messages())
    assert_bytes_as_blobs(await thread.events())
    back = await to_model_messages(thread)
    assert dump(back) == dump(result.all_messages())

    # A tool return whose own content holds media, as a history may.
    returned: list[ModelMessage] = [
        ModelRequest(parts=[UserPromptPart("shot?")]),
        ModelResponse(parts=[ToolCallPart("shot", {}, tool_call_id="s1")]),
        ModelRequest(parts=[ToolReturnPart("shot", ["here", BinaryContent(data=PNG, media_type="image/png")], tool_call_id="s1")]),
        ModelResponse(parts=[TextPart("ok")]),
    ]
    other = await tk.open_thread("pydantic-ai-media-return")
    await append_model_messages(other, returned)
    assert_bytes_as_blobs(await other.events())
    assert dump(await to_model_messages(other)) == dump(returned)


@pytest.mark.parametrize(
    ("provider_name", "render_format"), [("anthropic", "anthropic"), ("google-gla", "gemini"), ("bedrock", "bedrock-converse")]
)
async def test_thinking_is_kept_and_replayed_for_its_provider(
    tk: AsyncThreadKeeper, provider_name: str, render_format: Literal["anthropic", "gemini", "bedrock-converse"]
) -> None:
    await skip_unless_server_has(tk, "pydanticAi/toEvents")
    thinking = [ThinkingPart("Erst nachdenken ✓", signature=f"sig-{provider_name}", provider_name=provider_name)]
    result = await media_agent(MediaScript(thinking)).run("Seite 2?")
    thread = await tk.open_thread(f"pydantic-ai-thinking-{provider_name}")
    await append_model_messages(thread, result.new_messages())
    events = await thread.events()
    reasoning = [(e["provider"], e["text"], e.get("signature")) for e in events if e["type"] == "reasoning"]
    if provider_name == "google-gla":
        assert reasoning == [("google", "Erst nachdenken ✓", None)]
        assert next(e for e in events if e["type"] == "tool_call")["thoughtSignature"] == "sig-google-gla"
    else:
        assert reasoning == [(provider_name, "Erst nachdenken ✓", f"sig-{provider_name}")]
    assert dump(await to_model_messages(thread)) == dump(result.all_messages())

    body: Any = await thread.render(render_format)
    if render_format == "anthropic":
        assert body["messages"][1]["content"][0] == {"type": "thinking", "thinking": "Erst nachdenken ✓", "signature": "sig-anthropic"}
    elif render_format == "gemini":
        parts = body["contents"][1]["parts"]
        # Pydantic AI's signature signs the part after the thinking: the first call.
        assert parts[0] == {"text": "Erst nachdenken ✓", "thought": True}
        assert next(p for p in parts if "functionCall" in p)["thoughtSignature"] == "sig-google-gla"
    else:
        assert body["messages"][1]["content"][0] == {"reasoningContent": {"reasoningText": {"text": "Erst nachdenken ✓", "signature": "sig-bedrock"}}}
