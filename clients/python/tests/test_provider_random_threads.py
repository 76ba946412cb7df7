"""Generated threads (seeded, so a failure names a reproducible seed) in every provider format,
and in the ``messages`` format through LangChain's converters: each rendering passes the
provider's request type and sequencing rules.

The generator mixes every event type, parallel and reused ids, ids the providers refuse, results
for unknown calls, errors naming calls, and empty and whitespace-only texts.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

import pytest
from conftest import BINARY, MEMORY_ARGS
from langchain_conversion import langchain_problems
from provider_rules import anthropic_problems, openai_chat_problems, openai_responses_problems
from provider_types import ANTHROPIC, OPENAI_CHAT, OPENAI_RESPONSES, validate_type

from threadkeeper import ThreadKeeper

SEEDS = range(120)
TEXTS = ["hi", "", "  \n", "x < y & \"z\"", "😀 é", "line\nbreak"]
IDS = ["a", "b", "c", "a b", "a.b", "", "x" * 70, "call_" + "9" * 36]
OPTIONS: list[dict[str, Any]] = [{}, {"group_tool_calls": True}, {"dangling_tool_calls": "drop"}, {"instructions": "Be brief."}]


def random_events(rng: random.Random) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = []
    for _ in range(rng.randint(0, 14)):
        iteration = rng.randint(0, 3)
        kind = rng.choice(["user", "assistant", "system", "call", "call", "call", "result", "result", "error", "human", "summary", "other"])
        if kind in ("user", "assistant", "system"):
            events.append({"type": "message", "role": kind, "content": rng.choice(TEXTS), "iteration": iteration})
        elif kind == "call":
            events.append({"type": "tool_call", "toolName": rng.choice(["search", "calc"]), "toolCallId": rng.choice(IDS), "args": {"q": rng.choice(TEXTS)}, "iteration": iteration})
        elif kind == "result":
            result = rng.choice([*TEXTS, {"n": 1}, None, [1, "two"]])
            events.append({"type": "tool_result", "toolCallId": rng.choice(IDS), "result": result, "iteration": iteration})
        elif kind == "error":
            error: dict[str, Any] = {"type": "error", "error": rng.choice(TEXTS), "recoverable": rng.random() < 0.5, "iteration": iteration}
            if rng.random() < 0.6:
                error["toolCallId"] = rng.choice(IDS)
            events.append(error)
        elif kind == "human":
            events.append({"type": "human_input_requested", "question": "Go on?", "iteration": iteration})
            events.append({"type": "human_input_received", "response": rng.choice(TEXTS), "iteration": iteration})
        elif kind == "summary":
            events.append({"type": "summary", "summarizedIterations": [0], "summary": "Earlier work.", "iteration": iteration})
        else:
            events.append({"type": rng.choice(["completion_note", "approval"]), "iteration": iteration})
    return events


@pytest.fixture(scope="module")
def blocking_tk() -> Iterator[ThreadKeeper]:
    with ThreadKeeper.spawn(binary=BINARY, args=MEMORY_ARGS, client_info={"name": "threadkeeper-py-tests"}) as client:
        yield client


@pytest.mark.parametrize("seed", SEEDS)
def test_generated_thread_is_valid_for_every_provider(blocking_tk: ThreadKeeper, seed: int) -> None:
    rng = random.Random(seed)
    events = random_events(rng)
    options = rng.choice(OPTIONS)
    thread = blocking_tk.open_thread(f"random-{seed}")
    thread.append(events)
    context = f"seed {seed}, options {options}, events {events}"

    chat = thread.render_openai_chat(**options)["messages"]
    validate_type(OPENAI_CHAT, chat)
    assert openai_chat_problems(chat) == [], f"{context}\n{chat}"

    responses = thread.render_openai_responses(**options)
    validate_type(OPENAI_RESPONSES, responses["input"])
    assert openai_responses_problems(responses["input"]) == [], f"{context}\n{responses}"

    anthropic = thread.render_anthropic(**options)
    validate_type(ANTHROPIC, anthropic["messages"])
    assert anthropic_problems(anthropic.get("system"), anthropic["messages"]) == [], f"{context}\n{anthropic}"

    stored = thread.render_messages(**options)
    assert langchain_problems(stored) == [], f"{context}\n{stored}"
