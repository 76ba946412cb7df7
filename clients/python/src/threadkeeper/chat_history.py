"""LangChain chat history backed by a threadkeeper thread (needs ``langchain-core``).

``from threadkeeper.chat_history import ThreadChatMessageHistory``
"""

from __future__ import annotations

from collections.abc import Sequence
import sys
from typing import Any

from langchain_core.chat_history import BaseChatMessageHistory
from langchain_core.messages import BaseMessage, HumanMessage

from ._bridge import ThreadBridge
from .langchain import langchain_to_stored_messages
from .client import AsyncThread
from .sync import Thread
from .types import MessagesRenderOptions

if sys.version_info >= (3, 11):
    from typing import Unpack
else:  # pragma: no cover
    from typing_extensions import Unpack


class ThreadChatMessageHistory(BaseChatMessageHistory):
    """The messages of a thread: reads render it as LangChain messages, writes append the messages
    as events (``messages/toEvents``), ``clear`` empties the thread.

    Give it a blocking :class:`Thread` to use ``messages``, ``add_messages`` and ``clear`` (the
    async variants work too), or an :class:`AsyncThread` to use ``aget_messages``,
    ``aadd_messages`` and ``aclear``. ``render_options`` (``context_mode``, ``instructions``, ...)
    apply to every read.

    Images, files and audio come back in the block form they were given in (``messages/toEvents``
    with ``keepBlockForms``), their bytes kept as blobs.

    Messages added in one call share an iteration: a call that starts with a human message opens
    the next iteration, any other call continues the last one.
    """

    def __init__(self, thread: Thread | AsyncThread, **render_options: Unpack[MessagesRenderOptions]) -> None:
        self._bridge = ThreadBridge(thread, "ThreadChatMessageHistory")
        self._render_options = render_options

    @property
    def thread_id(self) -> str:
        return self._bridge.thread.id

    @property
    def messages(self) -> list[BaseMessage]:  # type: ignore[override]  # a read-only property over the thread
        return self._bridge.blocking(self._read())

    def add_messages(self, messages: Sequence[BaseMessage]) -> None:
        self._bridge.blocking(self._append(messages))

    def clear(self) -> None:
        self._bridge.blocking(self._clear())

    async def aget_messages(self) -> list[BaseMessage]:
        return await self._bridge.run(self._read())

    async def aadd_messages(self, messages: Sequence[BaseMessage]) -> None:
        await self._bridge.run(self._append(messages))

    async def aclear(self) -> None:
        await self._bridge.run(self._clear())

    async def _read(self) -> list[BaseMessage]:
        return await self._bridge.thread.to_langchain_messages(**self._render_options)

    async def _append(self, messages: Sequence[BaseMessage]) -> None:
        if not messages:
            return
        iteration = await self._bridge.next_iteration(starts_turn=isinstance(messages[0], HumanMessage))
        # Each media block keeps its own form (v0.3 ``source_type``, ``image_url``, v1), so it comes back as written.
        params: dict[str, Any] = {"messages": langchain_to_stored_messages(list(messages)), "iteration": iteration, "keepBlockForms": True}
        result = await self._bridge.client.request("messages/toEvents", params)
        await self._bridge.thread.append(result["events"])

    async def _clear(self) -> None:
        await self._bridge.thread.clear()
