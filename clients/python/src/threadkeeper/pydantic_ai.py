"""Pydantic AI message history kept in a threadkeeper thread (needs ``pydantic-ai-slim``).

``from threadkeeper.pydantic_ai import append_model_messages, to_model_messages``

A run's messages go in with :func:`append_model_messages` (``pydanticAi/toEvents``, then
``thread/append``) and come back with :func:`to_model_messages` (``thread/render`` format
``pydantic-ai``), equal to what ``ModelMessagesTypeAdapter`` dumped, so the next run continues
from the thread::

    result = await agent.run("Hi!", message_history=await to_model_messages(thread))
    await append_model_messages(thread, result.new_messages())

Both take a thread from either client; the ``_sync`` forms are for the blocking ``Thread``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

from pydantic_ai.messages import ModelMessage, ModelMessagesTypeAdapter, ModelRequest

from ._bridge import ThreadBridge
from .client import AsyncThread, render_options
from .sync import Thread
from .types import AppendResult, ContextMode, DanglingToolCalls, EventInput

__all__ = ["append_model_messages", "append_model_messages_sync", "to_model_messages", "to_model_messages_sync"]


async def to_model_messages(
    thread: Thread | AsyncThread,
    *,
    instructions: str | None = None,
    context_mode: ContextMode | None = None,
    dangling_tool_calls: DanglingToolCalls | None = None,
) -> list[ModelMessage]:
    """The thread as Pydantic AI messages, for ``message_history=``. The options override the
    thread's settings for this render, as in ``render_messages``."""
    bridge = ThreadBridge(thread, "to_model_messages")
    options = render_options(instructions=instructions, context_mode=context_mode, dangling_tool_calls=dangling_tool_calls)
    return await bridge.run(_render(bridge, options))


async def append_model_messages(
    thread: Thread | AsyncThread,
    messages: Sequence[ModelMessage],
    *,
    iteration: int | None = None,
    expected_version: int | None = None,
) -> AppendResult | None:
    """Appends messages (a run's ``new_messages()``) as events, all or none; ``None`` when there
    are none. Without ``iteration``, messages that start with a user prompt open the thread's
    next iteration and any others continue its last one."""
    bridge = ThreadBridge(thread, "append_model_messages")
    return await bridge.run(_append(bridge, messages, iteration, expected_version))


def to_model_messages_sync(
    thread: Thread,
    *,
    instructions: str | None = None,
    context_mode: ContextMode | None = None,
    dangling_tool_calls: DanglingToolCalls | None = None,
) -> list[ModelMessage]:
    """:func:`to_model_messages` for the blocking client."""
    bridge = ThreadBridge(thread, "to_model_messages_sync")
    options = render_options(instructions=instructions, context_mode=context_mode, dangling_tool_calls=dangling_tool_calls)
    return bridge.blocking(_render(bridge, options))


def append_model_messages_sync(
    thread: Thread,
    messages: Sequence[ModelMessage],
    *,
    iteration: int | None = None,
    expected_version: int | None = None,
) -> AppendResult | None:
    """:func:`append_model_messages` for the blocking client."""
    bridge = ThreadBridge(thread, "append_model_messages_sync")
    return bridge.blocking(_append(bridge, messages, iteration, expected_version))


async def _render(bridge: ThreadBridge, options: dict[str, Any]) -> list[ModelMessage]:
    params: dict[str, Any] = {"threadId": bridge.thread.id, "format": "pydantic-ai"}
    if options:
        params["options"] = options
    rendered = await bridge.client.request("thread/render", params)
    return ModelMessagesTypeAdapter.validate_python(rendered["messages"])


def _starts_turn(messages: Sequence[ModelMessage]) -> bool:
    first = messages[0]
    return isinstance(first, ModelRequest) and any(part.part_kind == "user-prompt" for part in first.parts)


async def _append(
    bridge: ThreadBridge, messages: Sequence[ModelMessage], iteration: int | None, expected_version: int | None
) -> AppendResult | None:
    if not messages:
        return None
    if iteration is None:
        iteration = await bridge.next_iteration(starts_turn=_starts_turn(messages))
    dumped = ModelMessagesTypeAdapter.dump_python(list(messages), mode="json")
    result = await bridge.client.request("pydanticAi/toEvents", {"messages": dumped, "iteration": iteration})
    events = cast("list[EventInput]", result["events"])
    return await bridge.thread.append(events, expected_version=expected_version)
