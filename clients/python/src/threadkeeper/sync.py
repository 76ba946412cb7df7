"""The blocking facade: :class:`ThreadKeeper` and :class:`Thread`, the same methods as the
asyncio client, run on a private event loop driven by the calling thread (see ``_driven_loop``)."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Coroutine, Mapping, Sequence
from types import TracebackType
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from ._driven_loop import CallerDrivenLoop
from .client import START_TIMEOUT_S, AsyncThread, AsyncThreadKeeper
from .types import (
    AnthropicRequest,
    AppendResult,
    CompactionPlan,
    ContextMode,
    DanglingToolCalls,
    EscapeMode,
    EventInput,
    EventsPage,
    InitializeResult,
    IterationSummary,
    OpenAIChatRequest,
    OpenAIResponsesRequest,
    ParsedReply,
    ParsedToolCalls,
    PopResult,
    PromptTool,
    RenderFormat,
    StoredMessage,
    ThreadInfo,
    ThreadSettings,
    TokenCount,
    Tokenizer,
    Turn,
    TurnFormat,
    TurnRead,
    TurnValidation,
    XmlDelta,
)

if TYPE_CHECKING:
    from langchain_core.messages import BaseMessage

T = TypeVar("T")


class Thread:
    """One thread on the server (blocking). Obtained from ``open_thread()`` or ``import_thread()``."""

    def __init__(self, runner: CallerDrivenLoop, thread: AsyncThread) -> None:
        self._runner = runner
        self._run = runner.run
        self._thread = thread
        self.id = thread.id

    def __repr__(self) -> str:
        return f"Thread(id={self.id!r}, version={self.info.version}, event_count={self.info.event_count})"

    @property
    def info(self) -> ThreadInfo:
        return self._thread.info

    def append(self, events: Sequence[EventInput], *, expected_version: int | None = None, timeout: float | None = None) -> AppendResult:
        return self._run(self._thread.append(events, expected_version=expected_version, timeout=timeout))

    def render(self, format: RenderFormat, *, timeout: float | None = None, **options: Any) -> dict[str, Any]:
        return self._run(self._thread.render(format, timeout=timeout, **options))

    def render_xml(
        self,
        *,
        response_prefix: str | None = None,
        escape: EscapeMode | None = None,
        context_mode: ContextMode | None = None,
        instructions: str | None = None,
        group_tool_calls: bool | None = None,
        incremental: bool = False,
        timeout: float | None = None,
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
                timeout=timeout,
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
        timeout: float | None = None,
    ) -> XmlDelta:
        """See :meth:`AsyncThread.render_xml_delta`."""
        return self._run(
            self._thread.render_xml_delta(
                from_event,
                response_prefix=response_prefix,
                escape=escape,
                context_mode=context_mode,
                instructions=instructions,
                group_tool_calls=group_tool_calls,
                timeout=timeout,
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
        timeout: float | None = None,
    ) -> list[StoredMessage]:
        return self._run(
            self._thread.render_messages(
                context_mode=context_mode,
                instructions=instructions,
                response_prefix=response_prefix,
                escape=escape,
                group_tool_calls=group_tool_calls,
                dangling_tool_calls=dangling_tool_calls,
                timeout=timeout,
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
        timeout: float | None = None,
    ) -> str:
        return self._run(
            self._thread.render_text(
                context_mode=context_mode,
                instructions=instructions,
                response_prefix=response_prefix,
                escape=escape,
                group_tool_calls=group_tool_calls,
                dangling_tool_calls=dangling_tool_calls,
                timeout=timeout,
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
        timeout: float | None = None,
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
                timeout=timeout,
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
        timeout: float | None = None,
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
                timeout=timeout,
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
        timeout: float | None = None,
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
                timeout=timeout,
            )
        )

    def events(
        self, *, offset: int | None = None, limit: int | None = None, tail: int | None = None, timeout: float | None = None
    ) -> list[dict[str, Any]]:
        return self._run(self._thread.events(offset=offset, limit=limit, tail=tail, timeout=timeout))

    def events_page(
        self, *, offset: int | None = None, limit: int | None = None, tail: int | None = None, timeout: float | None = None
    ) -> EventsPage:
        return self._run(self._thread.events_page(offset=offset, limit=limit, tail=tail, timeout=timeout))

    def export(
        self, format: TurnFormat, *, redact_encrypted_content: bool | None = None, omit_data: bool | None = None, timeout: float | None = None
    ) -> str:
        return self._run(self._thread.export(format, redact_encrypted_content=redact_encrypted_content, omit_data=omit_data, timeout=timeout))

    def tokens(self, format: RenderFormat = "messages", *, tokenizer: Tokenizer | None = None, timeout: float | None = None, **options: Any) -> TokenCount:
        """See :meth:`AsyncThread.tokens`."""
        return self._run(self._thread.tokens(format, tokenizer=tokenizer, timeout=timeout, **options))

    def view(self, *, timeout: float | None = None, **options: Any) -> str:
        """See :meth:`AsyncThread.view`."""
        return self._run(self._thread.view(timeout=timeout, **options))

    def plan_compaction(
        self, *, max_context_tokens: int | None = None, keep_recent_iterations: int | None = None, timeout: float | None = None
    ) -> CompactionPlan:
        """See :meth:`AsyncThread.plan_compaction`."""
        return self._run(
            self._thread.plan_compaction(max_context_tokens=max_context_tokens, keep_recent_iterations=keep_recent_iterations, timeout=timeout)
        )

    def compact(
        self,
        summaries: Sequence[IterationSummary],
        *,
        keep_recent_iterations: int | None = None,
        expected_version: int | None = None,
        timeout: float | None = None,
    ) -> AppendResult:
        """See :meth:`AsyncThread.compact`."""
        return self._run(
            self._thread.compact(summaries, keep_recent_iterations=keep_recent_iterations, expected_version=expected_version, timeout=timeout)
        )

    def pop(self, count: int | None = None, *, expected_version: int | None = None, timeout: float | None = None) -> PopResult:
        """See :meth:`AsyncThread.pop`."""
        return self._run(self._thread.pop(count, expected_version=expected_version, timeout=timeout))

    def fork(
        self,
        *,
        at_version: int | None = None,
        at_event: int | None = None,
        new_thread_id: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        timeout: float | None = None,
    ) -> Thread:
        """See :meth:`AsyncThread.fork`."""
        forked = self._thread.fork(at_version=at_version, at_event=at_event, new_thread_id=new_thread_id, metadata=metadata, timeout=timeout)
        return Thread(self._runner, self._run(forked))

    def prompt_cli(
        self,
        *,
        tools: Sequence[PromptTool] | None = None,
        input_encoding: Literal["xml", "text"] | None = None,
        timeout: float | None = None,
        **options: Any,
    ) -> str:
        """See :meth:`AsyncThread.prompt_cli`."""
        return self._run(self._thread.prompt_cli(tools=tools, input_encoding=input_encoding, timeout=timeout, **options))

    def close(self, *, timeout: float | None = None) -> None:
        self._run(self._thread.close(timeout=timeout))

    def delete(self, *, timeout: float | None = None) -> bool:
        return self._run(self._thread.delete(timeout=timeout))

    def clear(self, *, timeout: float | None = None) -> ThreadInfo:
        """See :meth:`AsyncThread.clear`."""
        return self._run(self._thread.clear(timeout=timeout))

    def to_langchain_messages(self, **options: Any) -> list[BaseMessage]:
        return self._run(self._thread.to_langchain_messages(**options))

    def append_langchain_messages(
        self, messages: Sequence[BaseMessage], *, iteration: int | None = None, expected_version: int | None = None, timeout: float | None = None
    ) -> AppendResult:
        """See :meth:`AsyncThread.append_langchain_messages`."""
        return self._run(self._thread.append_langchain_messages(messages, iteration=iteration, expected_version=expected_version, timeout=timeout))


class ThreadKeeper:
    """A blocking connection to one threadkeeper server process.

    ``with ThreadKeeper.spawn(args=["--store", "memory"]) as tk: ...``
    """

    def __init__(self, runner: CallerDrivenLoop, client: AsyncThreadKeeper) -> None:
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
        timeout: float | None = None,
        start_timeout: float | None = START_TIMEOUT_S,
    ) -> ThreadKeeper:
        """Starts a server process and initializes it; see :meth:`AsyncThreadKeeper.spawn`.

        ``timeout`` is the default of every call (seconds; ``None`` waits as long as it takes);
        ``start_timeout`` bounds the wait for the answer to ``initialize``.
        """
        runner = CallerDrivenLoop()
        try:
            client = runner.run(AsyncThreadKeeper._start(binary, args, env, cwd, client_info, timeout, start_timeout))
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

    @property
    def timeout(self) -> float | None:
        """Seconds a call waits for its answer when it gives no ``timeout`` of its own (``None``: no limit)."""
        return self._client.timeout

    @timeout.setter
    def timeout(self, value: float | None) -> None:
        self._client.timeout = value

    def request(self, method: str, params: Any = None, *, timeout: float | None = None) -> Any:
        return self._run(self._client.request(method, params, timeout=timeout))

    def open_thread(
        self,
        thread_id: str | None = None,
        *,
        settings: ThreadSettings | None = None,
        metadata: Mapping[str, Any] | None = None,
        timeout: float | None = None,
    ) -> Thread:
        return Thread(self._runner, self._run(self._client.open_thread(thread_id, settings=settings, metadata=metadata, timeout=timeout)))

    def list_threads(self, *, timeout: float | None = None) -> list[ThreadInfo]:
        return self._run(self._client.list_threads(timeout=timeout))

    def delete_thread(self, thread_id: str, *, timeout: float | None = None) -> bool:
        return self._run(self._client.delete_thread(thread_id, timeout=timeout))

    def import_thread(self, text: str, format: TurnFormat, *, thread_id: str | None = None, timeout: float | None = None) -> Thread:
        return Thread(self._runner, self._run(self._client.import_thread(text, format, thread_id=thread_id, timeout=timeout)))

    def escape_xml(self, text: str, *, timeout: float | None = None) -> str:
        return self._run(self._client.escape_xml(text, timeout=timeout))

    def serialize_thread_to_xml(
        self, events: Sequence[EventInput], *, response_prefix: str | None = None, escape: EscapeMode | None = None, timeout: float | None = None
    ) -> str:
        return self._run(self._client.serialize_thread_to_xml(events, response_prefix=response_prefix, escape=escape, timeout=timeout))

    def parse_thread_xml(self, text: str, *, timeout: float | None = None) -> list[dict[str, Any]]:
        return self._run(self._client.parse_thread_xml(text, timeout=timeout))

    def messages_to_xml(self, messages: Sequence[StoredMessage], *, timeout: float | None = None) -> str:
        return self._run(self._client.messages_to_xml(messages, timeout=timeout))

    def messages_to_text(self, messages: Sequence[StoredMessage], *, timeout: float | None = None) -> str:
        return self._run(self._client.messages_to_text(messages, timeout=timeout))

    def parse_tool_calls(self, text: str, *, timeout: float | None = None) -> ParsedToolCalls:
        return self._run(self._client.parse_tool_calls(text, timeout=timeout))

    def stored_messages_to_events(
        self, messages: Sequence[StoredMessage], *, iteration: int | None = None, timeout: float | None = None
    ) -> list[EventInput]:
        """See :meth:`AsyncThreadKeeper.stored_messages_to_events`."""
        return self._run(self._client.stored_messages_to_events(messages, iteration=iteration, timeout=timeout))

    def messages_to_events(self, messages: Sequence[BaseMessage], *, iteration: int | None = None, timeout: float | None = None) -> list[EventInput]:
        """See :meth:`AsyncThreadKeeper.messages_to_events`."""
        return self._run(self._client.messages_to_events(messages, iteration=iteration, timeout=timeout))

    def responses_to_events(
        self, items: Sequence[Mapping[str, Any]], *, iteration: int | None = None, timeout: float | None = None
    ) -> list[EventInput]:
        """See :meth:`AsyncThreadKeeper.responses_to_events`."""
        return self._run(self._client.responses_to_events(items, iteration=iteration, timeout=timeout))

    def prompt_cli(
        self,
        *,
        thread_id: str | None = None,
        messages: Sequence[StoredMessage] | None = None,
        tools: Sequence[PromptTool] | None = None,
        input_encoding: Literal["xml", "text"] | None = None,
        timeout: float | None = None,
        **options: Any,
    ) -> str:
        """See :meth:`AsyncThreadKeeper.prompt_cli`."""
        return self._run(
            self._client.prompt_cli(thread_id=thread_id, messages=messages, tools=tools, input_encoding=input_encoding, timeout=timeout, **options)
        )

    def parse_reply(self, text: str, iteration: int, *, timeout: float | None = None) -> ParsedReply:
        """See :meth:`AsyncThreadKeeper.parse_reply`."""
        return self._run(self._client.parse_reply(text, iteration, timeout=timeout))

    def turn_to_yaml(
        self, turn: Turn, *, redact_encrypted_content: bool | None = None, omit_data: bool | None = None, timeout: float | None = None
    ) -> str:
        return self._run(self._client.turn_to_yaml(turn, redact_encrypted_content=redact_encrypted_content, omit_data=omit_data, timeout=timeout))

    def turn_from_yaml(self, text: str, *, timeout: float | None = None) -> TurnRead:
        return self._run(self._client.turn_from_yaml(text, timeout=timeout))

    def turn_to_json(
        self, turn: Turn, *, redact_encrypted_content: bool | None = None, omit_data: bool | None = None, timeout: float | None = None
    ) -> str:
        return self._run(self._client.turn_to_json(turn, redact_encrypted_content=redact_encrypted_content, omit_data=omit_data, timeout=timeout))

    def turn_from_json(self, text: str, *, timeout: float | None = None) -> TurnRead:
        return self._run(self._client.turn_from_json(text, timeout=timeout))

    def validate_turn(self, turn: Turn, *, strict: bool | None = None, timeout: float | None = None) -> TurnValidation:
        return self._run(self._client.validate_turn(turn, strict=strict, timeout=timeout))

    def close(self) -> int | None:
        """Ends the server and the background loop; returns the exit status."""
        if self._runner.loop.is_closed():
            return self._client.returncode
        try:
            return self._run(self._client.close())
        finally:
            self._runner.stopped_error = self._client._connection.stopped or self._runner.stopped_error
            self._runner.stop()
