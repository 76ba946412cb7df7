"""The blocking facade: :class:`ThreadKeeper` and :class:`Thread`, the same methods as the
asyncio client, run on a private event loop in a background thread."""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Coroutine, Mapping, Sequence
from types import TracebackType
from typing import TYPE_CHECKING, Any, TypeVar

from .client import AsyncThread, AsyncThreadKeeper
from .types import (
    AnthropicRequest,
    AnyAgentEvent,
    AppendResult,
    ContextMode,
    DanglingToolCalls,
    EscapeMode,
    EventsPage,
    InitializeResult,
    OpenAIChatRequest,
    OpenAIResponsesRequest,
    ParsedToolCalls,
    RenderFormat,
    StoredMessage,
    ThreadInfo,
    ThreadSettings,
    Turn,
    TurnFormat,
    TurnRead,
    TurnValidation,
    XmlDelta,
)

if TYPE_CHECKING:
    from langchain_core.messages import BaseMessage

T = TypeVar("T")


class _LoopThread:
    """An event loop running in a daemon thread, for blocking callers."""

    def __init__(self) -> None:
        #: Raised by calls made after ``stop()``.
        self.stopped_error: BaseException = RuntimeError("the threadkeeper client is closed")
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, name="threadkeeper-loop", daemon=True)
        self._thread.start()

    def run(self, coroutine: Coroutine[Any, Any, T]) -> T:
        if self.loop.is_closed():
            coroutine.close()
            raise self.stopped_error
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result()

    def stop(self) -> None:
        if self.loop.is_closed():
            return
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join()
        self.loop.close()


class Thread:
    """One thread on the server (blocking). Obtained from ``open_thread()`` or ``import_thread()``."""

    def __init__(self, runner: _LoopThread, thread: AsyncThread) -> None:
        self._run = runner.run
        self._thread = thread
        self.id = thread.id

    def __repr__(self) -> str:
        return f"Thread(id={self.id!r}, version={self.info.version}, event_count={self.info.event_count})"

    @property
    def info(self) -> ThreadInfo:
        return self._thread.info

    def append(self, events: Sequence[AnyAgentEvent], *, expected_version: int | None = None) -> AppendResult:
        return self._run(self._thread.append(events, expected_version=expected_version))

    def render(self, format: RenderFormat, **options: Any) -> dict[str, Any]:
        return self._run(self._thread.render(format, **options))

    def render_xml(
        self,
        *,
        response_prefix: str | None = None,
        escape: EscapeMode | None = None,
        context_mode: ContextMode | None = None,
        instructions: str | None = None,
        group_tool_calls: bool | None = None,
        incremental: bool = False,
    ) -> str:
        """See :meth:`AsyncThread.render_xml`, including ``incremental=True``."""
        return self._run(
            self._thread.render_xml(
                response_prefix=response_prefix,
                escape=escape,
                context_mode=context_mode,
                instructions=instructions,
                group_tool_calls=group_tool_calls,
                incremental=incremental,
            )
        )

    def render_xml_delta(
        self,
        from_event: int,
        *,
        response_prefix: str | None = None,
        escape: EscapeMode | None = None,
        context_mode: ContextMode | None = None,
        instructions: str | None = None,
        group_tool_calls: bool | None = None,
    ) -> XmlDelta:
        """See :meth:`AsyncThread.render_xml_delta`."""
        return self._run(
            self._thread.render_xml_delta(
                from_event, response_prefix=response_prefix, escape=escape, context_mode=context_mode, instructions=instructions, group_tool_calls=group_tool_calls
            )
        )

    def render_messages(
        self,
        *,
        context_mode: ContextMode | None = None,
        instructions: str | None = None,
        response_prefix: str | None = None,
        escape: EscapeMode | None = None,
        group_tool_calls: bool | None = None,
        dangling_tool_calls: DanglingToolCalls | None = None,
    ) -> list[StoredMessage]:
        return self._run(
            self._thread.render_messages(
                context_mode=context_mode,
                instructions=instructions,
                response_prefix=response_prefix,
                escape=escape,
                group_tool_calls=group_tool_calls,
                dangling_tool_calls=dangling_tool_calls,
            )
        )

    def render_text(
        self,
        *,
        context_mode: ContextMode | None = None,
        instructions: str | None = None,
        response_prefix: str | None = None,
        escape: EscapeMode | None = None,
        group_tool_calls: bool | None = None,
        dangling_tool_calls: DanglingToolCalls | None = None,
    ) -> str:
        return self._run(
            self._thread.render_text(
                context_mode=context_mode,
                instructions=instructions,
                response_prefix=response_prefix,
                escape=escape,
                group_tool_calls=group_tool_calls,
                dangling_tool_calls=dangling_tool_calls,
            )
        )

    def render_openai_chat(
        self,
        *,
        context_mode: ContextMode | None = None,
        instructions: str | None = None,
        response_prefix: str | None = None,
        escape: EscapeMode | None = None,
        group_tool_calls: bool | None = None,
        dangling_tool_calls: DanglingToolCalls | None = None,
    ) -> OpenAIChatRequest:
        """See :meth:`AsyncThread.render_openai_chat`."""
        return self._run(
            self._thread.render_openai_chat(
                context_mode=context_mode,
                instructions=instructions,
                response_prefix=response_prefix,
                escape=escape,
                group_tool_calls=group_tool_calls,
                dangling_tool_calls=dangling_tool_calls,
            )
        )

    def render_openai_responses(
        self,
        *,
        context_mode: ContextMode | None = None,
        instructions: str | None = None,
        response_prefix: str | None = None,
        escape: EscapeMode | None = None,
        group_tool_calls: bool | None = None,
        dangling_tool_calls: DanglingToolCalls | None = None,
    ) -> OpenAIResponsesRequest:
        """See :meth:`AsyncThread.render_openai_responses`."""
        return self._run(
            self._thread.render_openai_responses(
                context_mode=context_mode,
                instructions=instructions,
                response_prefix=response_prefix,
                escape=escape,
                group_tool_calls=group_tool_calls,
                dangling_tool_calls=dangling_tool_calls,
            )
        )

    def render_anthropic(
        self,
        *,
        context_mode: ContextMode | None = None,
        instructions: str | None = None,
        response_prefix: str | None = None,
        escape: EscapeMode | None = None,
        group_tool_calls: bool | None = None,
        dangling_tool_calls: DanglingToolCalls | None = None,
    ) -> AnthropicRequest:
        """See :meth:`AsyncThread.render_anthropic`."""
        return self._run(
            self._thread.render_anthropic(
                context_mode=context_mode,
                instructions=instructions,
                response_prefix=response_prefix,
                escape=escape,
                group_tool_calls=group_tool_calls,
                dangling_tool_calls=dangling_tool_calls,
            )
        )

    def events(self, *, offset: int | None = None, limit: int | None = None) -> list[dict[str, Any]]:
        return self._run(self._thread.events(offset=offset, limit=limit))

    def events_page(self, *, offset: int | None = None, limit: int | None = None) -> EventsPage:
        return self._run(self._thread.events_page(offset=offset, limit=limit))

    def export(self, format: TurnFormat, *, redact_encrypted_content: bool | None = None, omit_data: bool | None = None) -> str:
        return self._run(self._thread.export(format, redact_encrypted_content=redact_encrypted_content, omit_data=omit_data))

    def close(self) -> None:
        self._run(self._thread.close())

    def delete(self) -> bool:
        return self._run(self._thread.delete())

    def to_langchain_messages(self, **options: Any) -> list[BaseMessage]:
        return self._run(self._thread.to_langchain_messages(**options))


class ThreadKeeper:
    """A blocking connection to one threadkeeper server process.

    ``with ThreadKeeper.spawn(args=["--store", "memory"]) as tk: ...``
    """

    def __init__(self, runner: _LoopThread, client: AsyncThreadKeeper) -> None:
        self._runner = runner
        self._run = runner.run
        self._client = client

    @classmethod
    def spawn(
        cls,
        binary: str | os.PathLike[str] | None = None,
        args: Sequence[str] | None = None,
        env: Mapping[str, str] | None = None,
        cwd: str | os.PathLike[str] | None = None,
        client_info: Mapping[str, str] | None = None,
    ) -> ThreadKeeper:
        """Starts a server process and initializes it; see :meth:`AsyncThreadKeeper.spawn`."""
        runner = _LoopThread()
        try:
            client = runner.run(AsyncThreadKeeper.spawn(binary=binary, args=args, env=env, cwd=cwd, client_info=client_info))
        except BaseException:
            runner.stop()
            raise
        return cls(runner, client)

    def __enter__(self) -> ThreadKeeper:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.close()

    @property
    def server(self) -> InitializeResult:
        return self._client.server

    @property
    def binary(self) -> str:
        return self._client.binary

    @property
    def pid(self) -> int:
        return self._client.pid

    def request(self, method: str, params: Any = None) -> Any:
        return self._run(self._client.request(method, params))

    def open_thread(self, thread_id: str | None = None, *, settings: ThreadSettings | None = None, metadata: Mapping[str, Any] | None = None) -> Thread:
        return Thread(self._runner, self._run(self._client.open_thread(thread_id, settings=settings, metadata=metadata)))

    def list_threads(self) -> list[ThreadInfo]:
        return self._run(self._client.list_threads())

    def delete_thread(self, thread_id: str) -> bool:
        return self._run(self._client.delete_thread(thread_id))

    def import_thread(self, text: str, format: TurnFormat, *, thread_id: str | None = None) -> Thread:
        return Thread(self._runner, self._run(self._client.import_thread(text, format, thread_id=thread_id)))

    def escape_xml(self, text: str) -> str:
        return self._run(self._client.escape_xml(text))

    def serialize_thread_to_xml(self, events: Sequence[AnyAgentEvent], *, response_prefix: str | None = None, escape: EscapeMode | None = None) -> str:
        return self._run(self._client.serialize_thread_to_xml(events, response_prefix=response_prefix, escape=escape))

    def parse_thread_xml(self, text: str) -> list[dict[str, Any]]:
        return self._run(self._client.parse_thread_xml(text))

    def messages_to_xml(self, messages: Sequence[StoredMessage]) -> str:
        return self._run(self._client.messages_to_xml(messages))

    def messages_to_text(self, messages: Sequence[StoredMessage]) -> str:
        return self._run(self._client.messages_to_text(messages))

    def parse_tool_calls(self, text: str) -> ParsedToolCalls:
        return self._run(self._client.parse_tool_calls(text))

    def turn_to_yaml(self, turn: Turn, *, redact_encrypted_content: bool | None = None, omit_data: bool | None = None) -> str:
        return self._run(self._client.turn_to_yaml(turn, redact_encrypted_content=redact_encrypted_content, omit_data=omit_data))

    def turn_from_yaml(self, text: str) -> TurnRead:
        return self._run(self._client.turn_from_yaml(text))

    def turn_to_json(self, turn: Turn, *, redact_encrypted_content: bool | None = None, omit_data: bool | None = None) -> str:
        return self._run(self._client.turn_to_json(turn, redact_encrypted_content=redact_encrypted_content, omit_data=omit_data))

    def turn_from_json(self, text: str) -> TurnRead:
        return self._run(self._client.turn_from_json(text))

    def validate_turn(self, turn: Turn, *, strict: bool | None = None) -> TurnValidation:
        return self._run(self._client.validate_turn(turn, strict=strict))

    def close(self) -> int | None:
        """Ends the server and the background loop; returns the exit status."""
        if self._runner.loop.is_closed():
            return self._client.returncode
        try:
            return self._run(self._client.close())
        finally:
            self._runner.stopped_error = self._client._connection.stopped or self._runner.stopped_error
            self._runner.stop()
