"""An OpenAI Agents SDK session backed by a threadkeeper thread (needs ``openai-agents``).

``from threadkeeper.openai_agents import ThreadSession``
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, cast

from agents.items import TResponseInputItem
from agents.memory import SessionSettings

from ._agents_js_items import is_sdk_form, wire_item
from ._bridge import ThreadBridge
from .client import AsyncThread, AsyncThreadKeeper
from .sync import Thread


def _starts_turn(item: Mapping[str, Any]) -> bool:
    return item.get("role") == "user" and item.get("type", "message") == "message"


#: The event field ``responses/toEvents`` keeps an item in (``keepItems``); ``None``: made from no item.
_KEPT = "responsesItem"


def _gives_an_item(event: Mapping[str, Any]) -> bool:
    """Whether ``responses/fromEvents`` reads an item of its own out of this one event: one that
    kept its item, or a reasoning block (which describes its item whole)."""
    if _KEPT in event:
        return event[_KEPT] is not None
    block = event.get("block")
    return event.get("type") == "turn_block" and isinstance(block, Mapping) and block.get("kind") == "reasoning"


class ThreadSession:
    """The Agents SDK ``Session`` protocol over a thread: ``add_items`` appends one event per item,
    each keeping the item it was made from (``responses/toEvents`` with ``keepItems``);
    ``get_items`` reads them back (``responses/fromEvents``), exactly as added; ``pop_item``
    removes the newest item's event and returns that item; ``clear_session`` empties the thread.
    ``session_id`` is the thread id. The model input is the thread's render as ever (an unanswered
    call gets its made-up answer there, not in ``get_items``). Events an earlier version wrote, or
    that came from elsewhere, read as the ``openai-responses`` render gives them.

    Items are kept in the Responses API's wire form, the form the TypeScript client's
    ``ThreadSession`` keeps too: a session either SDK began goes on under the other. What the
    TypeScript SDK's items have beyond that form is kept beside them (an event's ``agentsJs``),
    which this session leaves alone; items that client kept in its SDK's own camelCase form (its
    earlier versions) read as their wire items.

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
        """The items added, oldest first; with ``limit``, the latest ``limit`` of them."""
        if limit is None and self.session_settings is not None:
            limit = self.session_settings.limit
        if limit is not None and limit <= 0:
            return []
        items = await self._bridge.run(self._items(limit))
        return items if limit is None else items[-limit:]

    async def add_items(self, items: list[TResponseInputItem]) -> None:
        if items:
            await self._bridge.run(self._add([dict(cast(Mapping[str, Any], item)) for item in items]))

    async def pop_item(self) -> TResponseInputItem | None:
        """Removes the newest item and returns it (``None`` when there is none)."""
        return await self._bridge.run(self._pop())

    async def clear_session(self) -> None:
        await self._bridge.run(self._bridge.thread.clear())

    async def _from_events(self, events: Sequence[Mapping[str, Any]]) -> list[TResponseInputItem]:
        """The items of events; one the TypeScript client kept in its SDK's own form (as its earlier
        versions did) reads as its wire item."""
        result = await self._bridge.client.request("responses/fromEvents", {"events": list(events)})
        items = [wire_item(item) if is_sdk_form(item) else item for item in result["items"]]
        return cast("list[TResponseInputItem]", items)

    async def _items(self, limit: int | None) -> list[TResponseInputItem]:
        """All items, or at least the latest ``limit`` (from the last events: one per item, mostly)."""
        thread = self._bridge.thread
        if limit is None:
            return await self._from_events(await thread.events())
        tail = limit
        while True:
            page = await thread.events_page(tail=tail)
            items = await self._from_events(page.events)
            if len(items) >= limit or len(page.events) >= page.event_count:
                return items
            tail *= 2

    async def _add(self, items: list[dict[str, Any]]) -> None:
        thread = self._bridge.thread
        iteration = await self._bridge.next_iteration(starts_turn=_starts_turn(items[0]))
        # Images' and files' bytes are stored once, as blobs, not as base64 inside the kept item.
        params = {"items": items, "iteration": iteration, "keepItems": True, "keepMediaAsBlobs": True}
        result = await self._bridge.client.request("responses/toEvents", params)
        await thread.append(result["events"])

    async def _pop(self) -> TResponseInputItem | None:
        thread = self._bridge.thread
        tail = 4
        while True:
            page = await thread.events_page(tail=tail)
            events = page.events
            if not events:
                return None
            # The newest event that gives an item; the ones after it (a question read back from
            # that item's answer) go with it.
            last = next((i for i in range(len(events) - 1, -1, -1) if _gives_an_item(events[i]) or _KEPT not in events[i]), None)
            if last is None and len(events) < page.event_count:
                tail *= 2
                continue
            if last is None:
                return None
            if _gives_an_item(events[last]):
                item = (await self._from_events([events[last]]))[0]
                await thread.pop(len(events) - last, expected_version=page.version)
                return item
            # An event that kept no item (an earlier version's): the last item as the render reads
            # the whole thread, and its last event goes, as before.
            page = await thread.events_page()
            items = await self._from_events(page.events)
            await thread.pop(1, expected_version=page.version)
            return items[-1] if items else None
