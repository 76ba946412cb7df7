"""An OpenAI Agents SDK session backed by a threadkeeper thread (needs ``openai-agents``).

``from threadkeeper.openai_agents import ThreadSession``
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

from agents.items import TResponseInputItem
from agents.memory import SessionSettings

from ._bridge import ThreadBridge
from .client import AsyncThread, AsyncThreadKeeper
from .sync import Thread


def _starts_turn(item: Mapping[str, Any]) -> bool:
    return item.get("role") == "user" and item.get("type", "message") == "message"


class ThreadSession:
    """The Agents SDK ``Session`` protocol over a thread: ``add_items`` appends the items as events
    (``responses/toEvents``), ``get_items`` renders the thread as Responses input items
    (``openai-responses``), ``pop_item`` removes the last event (``thread/pop``), ``clear_session``
    empties the thread. ``session_id`` is the thread id.

    ``Runner.run(agent, "...", session=ThreadSession(thread))``; the thread may come from either client.
    Items added in one call share an iteration: a call that starts with a user message opens the
    next iteration, any other call continues the last one.
    """

    session_settings: SessionSettings | None = None

    def __init__(self, thread: Thread | AsyncThread, session_settings: SessionSettings | None = None) -> None:
        self._bridge = ThreadBridge(thread, "ThreadSession")
        self.session_id = self._bridge.thread.id
        self.session_settings = session_settings

    @classmethod
    async def open(cls, client: AsyncThreadKeeper, session_id: str | None = None, session_settings: SessionSettings | None = None) -> ThreadSession:
        """The session of thread ``session_id`` (created when missing; a new id without one)."""
        return cls(await client.open_thread(session_id), session_settings)

    async def get_items(self, limit: int | None = None) -> list[TResponseInputItem]:
        """The conversation as Responses input items; with ``limit``, the latest ``limit`` of them."""
        if limit is None and self.session_settings is not None:
            limit = self.session_settings.limit
        items = (await self._bridge.run(self._items()))[1]
        if limit is None:
            return items
        return items[-limit:] if limit > 0 else []

    async def add_items(self, items: list[TResponseInputItem]) -> None:
        if items:
            await self._bridge.run(self._add([dict(cast(Mapping[str, Any], item)) for item in items]))

    async def pop_item(self) -> TResponseInputItem | None:
        """Removes the thread's last event and returns the last item as rendered before."""
        return await self._bridge.run(self._pop())

    async def clear_session(self) -> None:
        await self._bridge.run(self._bridge.thread.clear())

    async def _items(self) -> tuple[int, list[TResponseInputItem]]:
        """The thread's version and its Responses items; instructions (from system events) come first
        as a system message, as they were added."""
        rendered = await self._bridge.thread.render("openai-responses")
        items: list[Any] = list(rendered["input"])
        if "instructions" in rendered:
            items.insert(0, {"role": "system", "content": rendered["instructions"]})
        return int(rendered["version"]), items

    async def _add(self, items: list[dict[str, Any]]) -> None:
        thread = self._bridge.thread
        iteration = await self._bridge.next_iteration(starts_turn=_starts_turn(items[0]))
        events = await thread._client.responses_to_events(items, iteration=iteration)
        await thread.append(events)

    async def _pop(self) -> TResponseInputItem | None:
        version, items = await self._items()
        if not items:
            return None
        # At the version rendered, so the item returned is the one whose event goes.
        await self._bridge.thread.pop(1, expected_version=version)
        return items[-1]
