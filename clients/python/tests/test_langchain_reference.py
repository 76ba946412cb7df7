"""ThreadChatMessageHistory against LangChain's own InMemoryChatMessageHistory, message by message
and field by field after every step, and a LangGraph agent run read back from a thread."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import pytest
from conftest import BINARY, MEMORY_ARGS
from langchain_core.chat_history import InMemoryChatMessageHistory
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage, convert_to_openai_messages
from langchain_core.tools import tool

from threadkeeper import ThreadKeeper
from threadkeeper.chat_history import ThreadChatMessageHistory

#: Every field a history keeps, as InMemoryChatMessageHistory keeps it.
FIELDS = ["type", "content", "id", "name", "tool_calls", "tool_call_id", "status", "additional_kwargs", "response_metadata", "usage_metadata", "artifact"]


def fields(message: BaseMessage) -> dict[str, Any]:
    return {name: getattr(message, name, None) for name in FIELDS}


def assert_same_messages(ours: Sequence[BaseMessage], reference: Sequence[BaseMessage]) -> None:
    assert len(ours) == len(reference)
    for index, (got, expected) in enumerate(zip(ours, reference)):
        assert type(got) is type(expected), index
        assert fields(got) == fields(expected), index


STEPS: list[list[BaseMessage]] = [
    [HumanMessage("What is the weather in Lyon?", id="h1", name="ann", additional_kwargs={"lang": "en"})],
    [
        AIMessage(
            "Let me check.",
            id="a1",
            name="assistant",
            tool_calls=[{"id": "call_1", "name": "weather", "args": {"city": "Lyon"}, "type": "tool_call"}],
            additional_kwargs={"refusal": None},
            response_metadata={"model_name": "gpt-x", "finish_reason": "tool_calls", "token_usage": {"total_tokens": 30}},
            usage_metadata={"input_tokens": 20, "output_tokens": 10, "total_tokens": 30},
        ),
        ToolMessage("sunny", tool_call_id="call_1", name="weather", id="t1", artifact={"source": "api"}),
    ],
    [
        AIMessage(
            "It is sunny in Lyon.",
            id="a2",
            response_metadata={"finish_reason": "stop"},
            usage_metadata={"input_tokens": 40, "output_tokens": 6, "total_tokens": 46},
        )
    ],
    [
        HumanMessage("And Paris?"),
        AIMessage("", tool_calls=[{"id": "call_2", "name": "weather", "args": {"city": "Paris"}, "type": "tool_call"}, {"id": "call_3", "name": "weather", "args": {"city": "Nice"}, "type": "tool_call"}]),
        ToolMessage("rain", tool_call_id="call_2", name="weather"),
        ToolMessage("wind", tool_call_id="call_3", name="weather", status="success"),
    ],
]


@pytest.fixture
def tk() -> Iterator[ThreadKeeper]:
    with ThreadKeeper.spawn(binary=BINARY, args=MEMORY_ARGS) as client:
        yield client


def test_every_field_matches_in_memory_history_after_every_step(tk: ThreadKeeper) -> None:
    ours, reference = ThreadChatMessageHistory(tk.open_thread("lc-ref")), InMemoryChatMessageHistory()
    for step in STEPS:
        ours.add_messages(step)
        reference.add_messages(step)
        assert_same_messages(ours.messages, reference.messages)
    ours.clear()
    reference.clear()
    assert ours.messages == reference.messages == []


#: A 2 × 1 PNG, a tiny PDF and an empty WAV, as base64.
PNG = "iVBORw0KGgoAAAANSUhEUgAAAAIAAAABCAIAAAB7QOjdAAAADUlEQVR4nGP4z8AARAAI/gH/xp559wAAAABJRU5ErkJggg=="
PDF = "JVBERi0xLjQKMSAwIG9iajw8Pj5lbmRvYmoKdHJhaWxlcjw8Pj4KJSVFT0YK"
WAV = "UklGRiQAAABXQVZFZm10IBAAAAABAAEAQB8AAIA+AAACABAAZGF0YQAAAAA="

#: Media in LangChain's standard blocks (v1: bytes as ``base64`` or a ``url``, a file's name in ``extras``; v0.3) and the older ``image_url``.
MEDIA_STEPS: list[list[BaseMessage]] = [
    [
        HumanMessage(
            [
                {"type": "text", "text": "What are these?"},
                {"type": "image", "base64": PNG, "mime_type": "image/png"},
                {"type": "image", "url": "https://example.com/a.png"},
                {"type": "file", "base64": PDF, "mime_type": "application/pdf", "extras": {"filename": "r.pdf"}},
                {"type": "audio", "base64": WAV, "mime_type": "audio/wav"},
            ],
            id="h-media",
        )
    ],
    [AIMessage("A red image, a report and silence.", id="a-media")],
    # The v0.3 standard form and the older image_url form come back in their own form.
    [
        HumanMessage(
            [
                {"type": "image", "source_type": "base64", "data": PNG, "mime_type": "image/png"},
                {"type": "file", "source_type": "base64", "data": PDF, "mime_type": "application/pdf", "filename": "s.pdf"},
                {"type": "audio", "source_type": "base64", "data": WAV, "mime_type": "audio/wav"},
                {"type": "image", "source_type": "url", "url": "https://example.com/b.png"},
                {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG}", "detail": "high"}},
                {"type": "image_url", "image_url": {"url": "https://example.com/c.png"}},
            ]
        )
    ],
]


#: An Anthropic tool-use turn: signed thinking (one with empty text), redacted thinking, text and a call.
REASONING_STEPS: list[list[BaseMessage]] = [
    [HumanMessage("Weather in Rome?", id="h-r")],
    [
        AIMessage(
            [
                {"type": "thinking", "thinking": "Rome: call the tool \u2713", "signature": "sig-a"},
                {"type": "thinking", "thinking": "", "signature": "sig-omitted"},
                {"type": "redacted_thinking", "data": "red-a"},
                {"type": "text", "text": "Let me check."},
            ],
            id="a-r",
            tool_calls=[{"id": "call_r", "name": "weather", "args": {"city": "Rome"}, "type": "tool_call"}],
            response_metadata={"model_provider": "anthropic", "model_name": "claude-sonnet-4-5"},
        ),
        ToolMessage("18 \u00b0C", tool_call_id="call_r", name="weather", id="t-r"),
    ],
    [AIMessage("18 \u00b0C in Rome.", id="a-r2")],
]


def test_thinking_blocks_with_tool_calls_match_in_memory_history_and_replay_first(tk: ThreadKeeper) -> None:
    thread = tk.open_thread("lc-reasoning")
    ours, reference = ThreadChatMessageHistory(thread), InMemoryChatMessageHistory()
    for step in REASONING_STEPS:
        ours.add_messages(step)
        reference.add_messages(step)
        assert_same_messages(ours.messages, reference.messages)
    kinds = [event["type"] for event in thread.events()]
    assert kinds[1:5] == ["reasoning", "reasoning", "reasoning", "message"]
    content = thread.render("anthropic")["messages"][1]["content"]
    assert content[:3] == [
        {"type": "thinking", "thinking": "Rome: call the tool \u2713", "signature": "sig-a"},
        {"type": "thinking", "thinking": "", "signature": "sig-omitted"},
        {"type": "redacted_thinking", "data": "red-a"},
    ]
    assert [block["type"] for block in content[3:]] == ["text", "tool_use"]


def test_media_in_every_block_form_matches_in_memory_history_and_is_kept_as_blobs(tk: ThreadKeeper) -> None:
    thread = tk.open_thread("lc-media")
    ours, reference = ThreadChatMessageHistory(thread), InMemoryChatMessageHistory()
    for step in MEDIA_STEPS:
        ours.add_messages(step)
        reference.add_messages(step)
        assert_same_messages(ours.messages, reference.messages)
    events = repr(thread.events())
    assert all(data not in events for data in (PNG, PDF, WAV))


def test_media_through_a_runnable_with_message_history_loop_matches_in_memory_history(tk: ThreadKeeper) -> None:
    """LangChain's own loop: RunnableWithMessageHistory reads the history, calls the model with
    the image turn, and writes the turn and the answer back, into each history alike."""
    from langchain_core.runnables.history import RunnableWithMessageHistory

    reference = InMemoryChatMessageHistory()
    thread = tk.open_thread("lc-media-loop")
    ours = ThreadChatMessageHistory(thread)
    histories: dict[str, Any] = {"ours": ours, "reference": reference}
    for session in histories:
        model = GenericFakeChatModel(messages=iter([AIMessage("A red square.", id="m1"), AIMessage("Still red.", id="m2")]))
        loop = RunnableWithMessageHistory(model, lambda session_id: histories[session_id])
        config: Any = {"configurable": {"session_id": session}}
        loop.invoke([MEDIA_STEPS[0][0]], config=config)
        loop.invoke([HumanMessage([{"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG}"}}], id="h2")], config=config)
    assert len(reference.messages) == 4
    assert_same_messages(ours.messages, reference.messages)
    assert PNG not in repr(thread.events()), "the image is a blob, not base64 in an event"


async def test_async_reads_match_too(tk: ThreadKeeper) -> None:
    ours, reference = ThreadChatMessageHistory(tk.open_thread("lc-ref-async")), InMemoryChatMessageHistory()
    for step in STEPS:
        await ours.aadd_messages(step)
        await reference.aadd_messages(step)
        assert_same_messages(await ours.aget_messages(), await reference.aget_messages())


def test_what_still_differs_is_what_the_readme_says(tk: ThreadKeeper) -> None:
    """System messages come back as labelled human messages, an error tool message's text carries
    the label of its error, content blocks come back as their joined text, and calls that still
    wait for their answers are read with made-up answers (the model input needs one per call)."""
    waiting = ThreadChatMessageHistory(tk.open_thread("lc-waiting"))
    waiting.add_messages([HumanMessage("q"), AIMessage("", tool_calls=[{"id": "c1", "name": "t", "args": {}, "type": "tool_call"}])])
    made_up = waiting.messages[-1]
    assert isinstance(made_up, ToolMessage) and made_up.content == "[Tool call not completed]: no result was recorded for this call"
    waiting.add_messages([ToolMessage("r", tool_call_id="c1")])
    assert [m.content for m in waiting.messages] == ["q", "", "r"]

    ours = ThreadChatMessageHistory(tk.open_thread("lc-diff"))
    ours.add_messages(
        [
            SystemMessage("Be brief.", id="s1"),
            HumanMessage([{"type": "text", "text": "Hello "}, {"type": "text", "text": "there"}], id="h1"),
            AIMessage("", tool_calls=[{"id": "c1", "name": "t", "args": {}, "type": "tool_call"}]),
            ToolMessage("boom", tool_call_id="c1", status="error", name="t"),
        ]
    )
    got = ours.messages
    assert [type(m) for m in got] == [HumanMessage, HumanMessage, AIMessage, ToolMessage]
    assert (got[0].content, got[0].id) == ("[System]: Be brief.", "s1")
    assert got[1].content == "Hello there"
    assert (got[3].content, got[3].status, got[3].name) == ("[Error (recoverable)]: boom", "error", "t")


# ---- a LangGraph agent run, read back ----


class ToolCallingFakeModel(GenericFakeChatModel):
    """A scripted chat model that accepts tools (it ignores them) and records what it was given."""

    seen: list[list[BaseMessage]] = []

    def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
        return self

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> Any:
        self.seen.append(list(messages))
        return super()._generate(messages, *args, **kwargs)


@tool
def weather(city: str) -> str:
    """The weather in a city."""
    return {"Lyon": "sunny", "Paris": "rain"}.get(city, "unknown")


def scripted_agent(replies: list[AIMessage]) -> tuple[Any, ToolCallingFakeModel]:
    from langgraph.prebuilt import create_react_agent

    model = ToolCallingFakeModel(messages=iter(replies))
    model.seen = []
    return create_react_agent(model, [weather]), model


def replies() -> list[AIMessage]:
    return [
        AIMessage(
            "",
            id="run-1",
            tool_calls=[{"id": "call_1", "name": "weather", "args": {"city": "Lyon"}, "type": "tool_call"}, {"id": "call_2", "name": "weather", "args": {"city": "Paris"}, "type": "tool_call"}],
            response_metadata={"finish_reason": "tool_calls"},
            usage_metadata={"input_tokens": 12, "output_tokens": 8, "total_tokens": 20},
        ),
        AIMessage("Lyon is sunny, Paris has rain.", id="run-2", response_metadata={"finish_reason": "stop"}),
        AIMessage("You asked about Lyon and Paris.", id="run-3"),
    ]


def test_a_langgraph_run_reads_back_as_its_own_messages(tk: ThreadKeeper) -> None:
    agent, _ = scripted_agent(replies())
    run = agent.invoke({"messages": [HumanMessage("Weather in Lyon and Paris?", id="h1")]})["messages"]
    assert [m.type for m in run] == ["human", "ai", "tool", "tool", "ai"]
    assert [m.name for m in run if isinstance(m, ToolMessage)] == ["weather", "weather"]
    history = ThreadChatMessageHistory(tk.open_thread("lc-graph"))
    history.add_messages(run)
    reference = InMemoryChatMessageHistory()
    reference.add_messages(run)
    assert_same_messages(history.messages, reference.messages)
    assert convert_to_openai_messages(history.messages) == convert_to_openai_messages(run)

    # The next turn's model input, from the history read back and from the run's own messages.
    def next_input(messages: list[BaseMessage]) -> list[BaseMessage]:
        agent, model = scripted_agent(replies()[2:])
        agent.invoke({"messages": [*messages, HumanMessage("What did I ask?", id="h2")]})
        return model.seen[0]

    from_history, from_run = next_input(history.messages), next_input(run)
    assert convert_to_openai_messages(from_history) == convert_to_openai_messages(from_run)
    assert_same_messages(from_history, from_run)
