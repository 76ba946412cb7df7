"""The providers' sequencing rules, which their request types cannot express.

Each function returns the list of problems found (empty when the request is acceptable), each
naming the offending position, so a failing test says what is wrong and where. The rules are the
ones the APIs enforce when a request arrives:

- OpenAI Chat Completions: an assistant message with ``tool_calls`` must be followed at once by
  one ``tool`` message per call id, before any other message; a ``tool`` message anywhere else
  is refused; call ids are unique, not empty and at most 40 characters.
- OpenAI Responses: every ``function_call`` has exactly one ``function_call_output`` with its
  ``call_id`` after it, every output has its call before it; a ``reasoning`` item is followed by
  the item it led to (a call or an assistant message).
- Anthropic Messages: roles alternate starting with ``user``; every ``tool_use`` is answered by
  a ``tool_result`` in the very next (user) turn, tool results first; a ``tool_result`` answers
  a ``tool_use`` of the turn just before; no empty content or text (a final assistant turn may be
  empty), and no whitespace-only text in a turn without other text ("text content blocks must
  contain non-whitespace text"); tool ids match
  ``^[A-Za-z0-9_-]{1,64}$`` and are unique; the system prompt is only the top-level ``system``.
  The API itself combines consecutive turns of one role into one turn: requests that rely on
  that (LangChain's) are checked after :func:`merge_consecutive_turns`.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterator, Sequence
from typing import Any

ANTHROPIC_TOOL_ID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
#: Chat Completions answers 400 "string too long" for a longer ``tool_calls[].id``.
OPENAI_CHAT_MAX_TOOL_CALL_ID = 40


def _is_json_object_text(text: Any) -> bool:
    try:
        return isinstance(json.loads(text), dict)
    except (TypeError, ValueError):
        return False


def openai_chat_problems(messages: Sequence[dict[str, Any]]) -> list[str]:
    problems: list[str] = []
    seen_ids: Counter[str] = Counter()
    i = 0
    while i < len(messages):
        message = messages[i]
        where = f"messages[{i}]"
        role = message.get("role")
        if role == "tool":
            problems.append(f"{where}: tool message {message.get('tool_call_id')!r} does not follow the assistant message that made the call")
            i += 1
            continue
        if role != "assistant" or "tool_calls" not in message:
            if role == "assistant" and message.get("content") is None:
                problems.append(f"{where}: assistant message with neither content nor tool_calls")
            i += 1
            continue
        calls = message["tool_calls"]
        if not calls:
            problems.append(f"{where}: empty tool_calls list")
        pending: Counter[str] = Counter()
        for k, call in enumerate(calls):
            call_id = call.get("id")
            if not call_id:
                problems.append(f"{where}.tool_calls[{k}].id: empty")
            elif len(call_id) > OPENAI_CHAT_MAX_TOOL_CALL_ID:
                problems.append(f"{where}.tool_calls[{k}].id: {len(call_id)} characters, over the {OPENAI_CHAT_MAX_TOOL_CALL_ID} the API accepts")
            seen_ids[call_id] += 1
            if seen_ids[call_id] > 1:
                problems.append(f"{where}.tool_calls[{k}].id: {call_id!r} used by an earlier call")
            pending[call_id] += 1
            if not _is_json_object_text(call.get("function", {}).get("arguments")):
                problems.append(f"{where}.tool_calls[{k}].function.arguments: not the JSON text of an object")
        i += 1
        while i < len(messages) and messages[i].get("role") == "tool":
            answered = messages[i].get("tool_call_id")
            if pending[answered] == 0:
                problems.append(f"messages[{i}]: tool message {answered!r} answers no pending call of {where}")
            else:
                pending[answered] -= 1
            i += 1
        for call_id, count in pending.items():
            if count:
                problems.append(f"{where}: tool call {call_id!r} is not answered by the tool messages right after it")
    return problems


def openai_responses_problems(items: Sequence[dict[str, Any]]) -> list[str]:
    problems: list[str] = []
    calls: dict[str, int] = {}
    answered: set[str] = set()
    for i, item in enumerate(items):
        where = f"input[{i}]"
        kind = item.get("type")
        if kind == "function_call":
            call_id = item.get("call_id")
            if not call_id:
                problems.append(f"{where}.call_id: empty")
            if call_id in calls:
                problems.append(f"{where}.call_id: {call_id!r} used by input[{calls[call_id]}] too")
            calls[call_id] = i
            if not _is_json_object_text(item.get("arguments")):
                problems.append(f"{where}.arguments: not the JSON text of an object")
        elif kind == "function_call_output":
            call_id = item.get("call_id")
            if call_id not in calls:
                problems.append(f"{where}: output for {call_id!r} has no function_call before it")
            elif call_id in answered:
                problems.append(f"{where}: second output for {call_id!r}")
            answered.add(call_id)
        elif kind == "reasoning":
            following = items[i + 1] if i + 1 < len(items) else None
            leads_somewhere = following is not None and (
                following.get("type") == "function_call" or (following.get("type") == "message" and following.get("role") == "assistant")
            )
            if not leads_somewhere:
                problems.append(f"{where}: reasoning item not followed by the call or assistant message it led to")
    for call_id, i in calls.items():
        if call_id not in answered:
            problems.append(f"input[{i}]: function_call {call_id!r} has no function_call_output after it")
    return problems


def _blocks(content: Any) -> list[dict[str, Any]]:
    """Content as blocks: a plain string is one text block (as the API reads it)."""
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return list(content)


def anthropic_problems(system: Any, messages: Sequence[dict[str, Any]]) -> list[str]:
    problems: list[str] = []
    if system is not None and not (isinstance(system, str) and system.strip()):
        problems.append(f"system: {system!r} is not a non-empty text")
    if messages and messages[0].get("role") != "user":
        problems.append("messages[0]: the first turn is not a user turn")
    tool_use_ids: Counter[str] = Counter()
    for i, message in enumerate(messages):
        where = f"messages[{i}]"
        role = message.get("role")
        if role not in ("user", "assistant"):
            problems.append(f"{where}.role: {role!r} (only user and assistant turns; the system prompt is top-level)")
        if i > 0 and role == messages[i - 1].get("role"):
            problems.append(f"{where}: second {role} turn in a row")
        if i == len(messages) - 1 and role == "assistant" and message.get("content") in ("", []):
            continue  # the one turn that may be empty: the model continues from it
        blocks = _blocks(message.get("content"))
        if not blocks:
            problems.append(f"{where}.content: empty")
        has_text = any(b.get("type") == "text" and str(b.get("text", "")).strip() for b in blocks)
        for k, block in enumerate(blocks):
            if block.get("type") == "text" and block.get("text") == "":
                problems.append(f"{where}.content[{k}]: empty text")
            elif block.get("type") == "text" and not str(block.get("text", "")).strip() and not has_text:
                problems.append(f"{where}.content[{k}]: whitespace-only text in a turn without other text")
            if block.get("type") == "tool_use":
                tool_id = block.get("id", "")
                tool_use_ids[tool_id] += 1
                if not ANTHROPIC_TOOL_ID.match(tool_id):
                    problems.append(f"{where}.content[{k}].id: {tool_id!r} does not match {ANTHROPIC_TOOL_ID.pattern}")
                if tool_use_ids[tool_id] > 1:
                    problems.append(f"{where}.content[{k}].id: {tool_id!r} used by an earlier tool_use")
        problems.extend(_tool_results_problems(messages, i))
    return problems


def merge_consecutive_turns(messages: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The turns as the Anthropic API reads them: consecutive turns of one role combined."""
    merged: list[dict[str, Any]] = []
    for message in messages:
        if merged and merged[-1]["role"] == message.get("role"):
            merged[-1] = {"role": message["role"], "content": _blocks(merged[-1]["content"]) + _blocks(message.get("content"))}
        else:
            merged.append(dict(message))
    return merged


def _tool_results_problems(messages: Sequence[dict[str, Any]], i: int) -> Iterator[str]:
    """The pairing of turn ``i``'s tool results with the tool uses of turn ``i - 1``, and of its
    tool uses with the results of turn ``i + 1``."""
    where = f"messages[{i}]"
    blocks = _blocks(messages[i].get("content"))
    uses_before = set()
    if i > 0 and messages[i - 1].get("role") == "assistant":
        uses_before = {b.get("id") for b in _blocks(messages[i - 1].get("content")) if b.get("type") == "tool_use"}
    seen_other = False
    answered: set[str] = set()
    for k, block in enumerate(blocks):
        if block.get("type") != "tool_result":
            seen_other = True
            continue
        tool_id = block.get("tool_use_id")
        if messages[i].get("role") != "user":
            yield f"{where}.content[{k}]: tool_result in a {messages[i].get('role')} turn"
        if seen_other:
            yield f"{where}.content[{k}]: tool_result after other content (tool results come first)"
        if tool_id not in uses_before:
            yield f"{where}.content[{k}]: tool_result {tool_id!r} answers no tool_use of the turn before"
        if tool_id in answered:
            yield f"{where}.content[{k}]: second tool_result for {tool_id!r}"
        answered.add(tool_id)
    uses = [b.get("id") for b in blocks if b.get("type") == "tool_use"]
    if uses:
        after = messages[i + 1] if i + 1 < len(messages) else None
        results_after = set()
        if after is not None and after.get("role") == "user":
            results_after = {b.get("tool_use_id") for b in _blocks(after.get("content")) if b.get("type") == "tool_result"}
        for tool_id in uses:
            if tool_id not in results_after:
                yield f"{where}: tool_use {tool_id!r} is not answered by a tool_result in the next turn"
