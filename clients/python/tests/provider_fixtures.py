"""The provider fixture threads (clients/fixtures/provider-threads, shared with the TypeScript
suite) and the "nothing lost" check of their renderings."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from threadkeeper import Thread, ThreadKeeper

FIXTURES_DIR = Path(__file__).resolve().parents[2] / "fixtures" / "provider-threads"


@dataclass(frozen=True)
class Fixture:
    name: str
    #: The events to append, or None when the thread comes from ``turn``.
    events: list[dict[str, Any]] | None
    #: A turn document to create the thread with ``thread/import`` (JSON).
    turn: dict[str, Any] | None
    settings: dict[str, Any]


def load_fixtures() -> list[Fixture]:
    fixtures = []
    for path in sorted(FIXTURES_DIR.glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        fixtures.append(Fixture(data["name"], data.get("events"), data.get("turn"), data.get("settings", {})))
    assert fixtures, f"no fixture threads under {FIXTURES_DIR}"
    return fixtures


def open_fixture(tk: ThreadKeeper, fixture: Fixture) -> Thread:
    """A new thread holding the fixture's events."""
    if fixture.turn is not None:
        thread = tk.import_thread(json.dumps(fixture.turn), "json", thread_id=f"fx-{fixture.name}")
    else:
        thread = tk.open_thread(f"fx-{fixture.name}")
        assert fixture.events is not None
        thread.append(fixture.events)
    if fixture.settings:
        thread = tk.open_thread(thread.id, settings=fixture.settings)  # type: ignore[arg-type]
    return thread


# Nothing lost: every text an event carries must appear in each rendering.


@dataclass(frozen=True)
class Text:
    text: str
    #: Where the text comes from, for the failure message.
    origin: str
    #: Only the system part of a rendering must hold it (summaries, instructions).
    system_only: bool = False
    #: Only the OpenAI Responses rendering can carry it (reasoning blocks).
    responses_only: bool = False


def _string_leaves(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _string_leaves(item)
    elif isinstance(value, list):
        for item in value:
            yield from _string_leaves(item)


def event_texts(events: list[dict[str, Any]], instructions: str | None) -> list[Text]:
    """The texts a rendering must keep.

    Documented exceptions: ``completion`` (the final answer is not model input), a
    ``human_input_requested`` question once a ``human_input_received`` follows it (the answer
    carries the exchange), unknown event types (no rendering has a place for them) except an
    imported reasoning block, which only the Responses format can carry. Empty and
    whitespace-only texts may be left out (providers refuse empty text). Summaries and the
    instructions must be in the system part.
    """
    texts: list[Text] = []
    if instructions:
        texts.append(Text(instructions, "instructions", system_only=True))

    def add(text: Any, origin: str) -> None:
        if isinstance(text, str) and text.strip():
            texts.append(Text(text, origin))

    for i, event in enumerate(events):
        kind = event.get("type")
        origin = f"events[{i}] ({kind})"
        if kind == "message":
            add(event["content"], origin + ".content")
        elif kind == "tool_call":
            add(event["toolName"], origin + ".toolName")
            for leaf in _string_leaves(event["args"]):
                add(leaf, origin + ".args")
        elif kind == "tool_result":
            for leaf in _string_leaves(event["result"]):
                add(leaf, origin + ".result")
        elif kind == "error":
            add(event["error"], origin + ".error")
        elif kind == "human_input_received":
            add(event["response"], origin + ".response")
        elif kind == "human_input_requested":
            if not any(later.get("type") == "human_input_received" for later in events[i + 1 :]):
                add(event["question"], origin + ".question")
        elif kind == "summary":
            texts.append(Text(event["summary"], origin + ".summary", system_only=True))
        elif kind == "turn_block" and event.get("block", {}).get("kind") == "reasoning":
            payload = event["block"].get("payload", {})
            summary = payload.get("summary")
            summary_texts = [summary] if isinstance(summary, str) else [part.get("text") for part in summary or []]
            for text in [payload.get("encrypted_content"), *summary_texts]:
                if isinstance(text, str) and text:
                    texts.append(Text(text, origin + ".block.payload", responses_only=True))
    return texts


def rendered_strings(value: Any) -> list[str]:
    """Every string in a rendering, and the strings inside those that are JSON texts (tool
    arguments, serialized results)."""
    found: list[str] = []
    for leaf in _string_leaves(value):
        found.append(leaf)
        if leaf[:1] in ("{", "["):
            try:
                found.extend(rendered_strings(json.loads(leaf)))
            except ValueError:
                pass
    return found


def lost_texts(texts: list[Text], whole: Any, system_part: Any, *, responses: bool = False) -> list[str]:
    """The texts that appear in no string of the rendering (``system_part``: its system prompt)."""
    everywhere = rendered_strings(whole)
    system = rendered_strings(system_part)
    lost = []
    for text in texts:
        if text.responses_only and not responses:
            continue
        haystack = system if text.system_only else everywhere
        if not any(text.text in candidate for candidate in haystack):
            lost.append(f"{text.origin}: {text.text!r}")
    return lost
