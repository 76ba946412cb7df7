"""What the adapters (LangChain chat history, Agents SDK session) need from a thread, whichever
client it came from: its asyncio handle, and a way to run that handle's calls from blocking code
and from the caller's own event loop."""

from __future__ import annotations

from collections.abc import Coroutine
from typing import Any, TypeVar

from .client import AsyncThread, AsyncThreadKeeper
from .sync import Thread, run_from_loop, run_now

T = TypeVar("T")


class ThreadBridge:
    def __init__(self, thread: Thread | AsyncThread, adapter: str) -> None:
        self._adapter = adapter
        #: A blocking thread's asyncio handle runs over the blocking connection: its calls block.
        self._blocks: bool
        if isinstance(thread, Thread):
            self.thread, self._blocks = thread._async, True
        elif isinstance(thread, AsyncThread):
            self.thread, self._blocks = thread, False
        else:
            raise TypeError(f"{adapter} needs a threadkeeper Thread or AsyncThread, got {type(thread).__name__}")

    @property
    def client(self) -> AsyncThreadKeeper:
        return self.thread._client

    def blocking(self, coroutine: Coroutine[Any, Any, T]) -> T:
        """Runs a call for a blocking method; an asyncio thread has no loop to block on."""
        if not self._blocks:
            coroutine.close()
            raise TypeError(
                f"this {self._adapter} wraps an AsyncThread: use its async methods (the a-prefixed ones), "
                "or give it a blocking Thread from ThreadKeeper"
            )
        return run_now(coroutine)

    async def run(self, coroutine: Coroutine[Any, Any, T]) -> T:
        """Runs a call for an async method: awaited for an asyncio thread, on a worker thread for a
        blocking one (so the caller's loop goes on meanwhile)."""
        if not self._blocks:
            return await coroutine
        return await run_from_loop(coroutine)

    async def next_iteration(self, starts_turn: bool) -> int:
        """The iteration for events about to be appended: after the last event's iteration when they
        start a new turn (a user message), else the same one (0 for an empty thread)."""
        last = await self.thread.events(tail=1)
        if not last:
            return 0
        iteration = last[-1].get("iteration")
        current = iteration if isinstance(iteration, int) else 0
        return current + 1 if starts_turn else current
