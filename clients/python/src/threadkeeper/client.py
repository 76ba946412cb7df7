"""The asyncio client: :class:`AsyncThreadKeeper` and :class:`AsyncThread`."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import TYPE_CHECKING, Any, Literal

from ._connection import Connection
from .discovery import find_binary
from .errors import ErrorCode, ThreadKeeperError
from .types import (
    AnthropicRender,
    AnthropicRequest,
    AnyAgentEvent,
    AppendResult,
    ContextMode,
    DanglingToolCalls,
    EscapeMode,
    EventsPage,
    InitializeResult,
    OpenAIChatRender,
    OpenAIChatRequest,
    OpenAIResponsesRender,
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

PROTOCOL_VERSION = 1


def _drop_none(**values: Any) -> dict[str, Any]:
    return {key: value for key, value in values.items() if value is not None}


def render_options(
    context_mode: ContextMode | None = None,
    instructions: str | None = None,
    response_prefix: str | None = None,
    escape: EscapeMode | None = None,
    group_tool_calls: bool | None = None,
    from_event: int | None = None,
    dangling_tool_calls: DanglingToolCalls | None = None,
) -> dict[str, Any]:
    """The wire form of render options (unset ones left out)."""
    return _drop_none(
        contextMode=context_mode,
        instructions=instructions,
        responsePrefix=response_prefix,
        escape=escape,
        groupToolCalls=group_tool_calls,
        fromEvent=from_event,
        danglingToolCalls=dangling_tool_calls,
    )


def turn_write_options(redact_encrypted_content: bool | None = None, omit_data: bool | None = None) -> dict[str, Any]:
    return _drop_none(redactEncryptedContent=redact_encrypted_content, omitData=omit_data)


@dataclass(frozen=True)
class _KeptLines:
    """The event lines of the document received so far in one escape mode."""

    lines: str
    event_count: int
    #: The thread version they were rendered at: a thread's version never goes down.
    version: int


_NOTHING_KEPT = _KeptLines("", 0, 0)


def _is_from_event_refused(error: ThreadKeeperError) -> bool:
    """-32602 about ``options.fromEvent``: the thread has fewer events than the lines kept."""
    return error.code == ErrorCode.INVALID_PARAMS and isinstance(error.data, dict) and error.data.get("path") == "options.fromEvent"


class AsyncThread:
    """One thread on the server. Obtained from ``open_thread()`` or ``import_thread()``."""

    def __init__(self, client: AsyncThreadKeeper, info: ThreadInfo) -> None:
        self._client = client
        self.id = info.thread_id
        #: The thread as it was when opened; ``version`` and ``event_count`` follow this handle's appends.
        self.info = info
        #: Lines kept by incremental XML renders, per escape mode (they differ in body escaping).
        self._xml_lines: dict[str, _KeptLines] = {}
        #: Incremental renders run one after the other, so each extends the lines the last one left.
        self._xml_lock = asyncio.Lock()
        #: Bumped when the kept lines are dropped, so a render already in flight does not keep its lines.
        self._xml_generation = 0

    def __repr__(self) -> str:
        return f"AsyncThread(id={self.id!r}, version={self.info.version}, event_count={self.info.event_count})"

    async def append(self, events: Sequence[AnyAgentEvent], *, expected_version: int | None = None) -> AppendResult:
        """Appends events, all or none. With ``expected_version``, fails with -32003 unless the thread is at it."""
        params = _drop_none(threadId=self.id, events=list(events), expectedVersion=expected_version)
        result = await self._client.request("thread/append", params)
        appended = AppendResult(result["threadId"], result["version"], result["eventCount"])
        self.info = ThreadInfo(
            self.id, appended.version, appended.event_count, self.info.settings, self.info.metadata, self.info.created_at, self.info.updated_at
        )
        return appended

    async def render(self, format: RenderFormat, **options: Any) -> dict[str, Any]:
        """The full ``thread/render`` result; ``options`` as in :func:`render_xml`."""
        wire = render_options(**options)
        params: dict[str, Any] = {"threadId": self.id, "format": format}
        if wire:
            params["options"] = wire
        result: dict[str, Any] = await self._client.request("thread/render", params)
        return result

    async def render_xml(
        self,
        *,
        response_prefix: str | None = None,
        escape: EscapeMode | None = None,
        context_mode: ContextMode | None = None,
        instructions: str | None = None,
        group_tool_calls: bool | None = None,
        incremental: bool = False,
    ) -> str:
        """The ``<thread>`` XML document, with the response prefix (option, else setting) appended.

        With ``incremental=True`` the server sends only the event lines this object has not
        received yet (an XML delta); the object keeps the lines, per escape mode, and assembles
        the document, so a step costs what was appended instead of the whole document. This
        assumes the thread is not deleted and recreated under the same id while this object is
        used (event lines never change otherwise: threads are append-only). When the server
        refuses the delta because the thread now has fewer events than kept, or reports a lower
        version than the kept lines were rendered at, the object drops what it kept and renders
        from the first event again.
        """
        options: dict[str, Any] = dict(
            response_prefix=response_prefix, escape=escape, context_mode=context_mode, instructions=instructions, group_tool_calls=group_tool_calls
        )
        if incremental:
            async with self._xml_lock:
                return await self._render_incremental(options)
        return str((await self.render("xml", **options))["text"])

    async def render_xml_delta(
        self,
        from_event: int,
        *,
        response_prefix: str | None = None,
        escape: EscapeMode | None = None,
        context_mode: ContextMode | None = None,
        instructions: str | None = None,
        group_tool_calls: bool | None = None,
    ) -> XmlDelta:
        """The XML delta from event ``from_event`` on (0 ≤ from_event ≤ event count, else -32602).

        The document is ``"<thread>\\n" + (the lines of every event so far) + delta.tail``.
        """
        result = await self.render(
            "xml",
            from_event=from_event,
            response_prefix=response_prefix,
            escape=escape,
            context_mode=context_mode,
            instructions=instructions,
            group_tool_calls=group_tool_calls,
        )
        return XmlDelta.from_wire(result)

    async def _render_incremental(self, options: dict[str, Any]) -> str:
        escape = options["escape"] or "full"
        kept = self._xml_lines.get(escape, _NOTHING_KEPT)
        generation = self._xml_generation
        try:
            delta = await self.render_xml_delta(kept.event_count, **options)
        except ThreadKeeperError as error:
            if kept.event_count == 0 or not _is_from_event_refused(error):
                raise
            self._forget_xml_lines()
            return await self._render_incremental(options)
        if delta.version < kept.version:
            self._forget_xml_lines()
            return await self._render_incremental(options)
        lines = kept.lines + delta.lines
        if generation == self._xml_generation:
            self._xml_lines[escape] = _KeptLines(lines, delta.event_count, delta.version)
        return "<thread>\n" + lines + delta.tail

    def _forget_xml_lines(self) -> None:
        self._xml_lines.clear()
        self._xml_generation += 1

    async def render_messages(
        self,
        *,
        context_mode: ContextMode | None = None,
        instructions: str | None = None,
        response_prefix: str | None = None,
        escape: EscapeMode | None = None,
        group_tool_calls: bool | None = None,
        dangling_tool_calls: DanglingToolCalls | None = None,
    ) -> list[StoredMessage]:
        """LangChain stored messages (standard or XML context mode)."""
        result = await self.render(
            "messages",
            context_mode=context_mode,
            instructions=instructions,
            response_prefix=response_prefix,
            escape=escape,
            group_tool_calls=group_tool_calls,
            dangling_tool_calls=dangling_tool_calls,
        )
        messages: list[StoredMessage] = result["messages"]
        return messages

    async def render_text(
        self,
        *,
        context_mode: ContextMode | None = None,
        instructions: str | None = None,
        response_prefix: str | None = None,
        escape: EscapeMode | None = None,
        group_tool_calls: bool | None = None,
        dangling_tool_calls: DanglingToolCalls | None = None,
    ) -> str:
        """The messages as one prompt text (``[User]\\n…`` blocks)."""
        result = await self.render(
            "text",
            context_mode=context_mode,
            instructions=instructions,
            response_prefix=response_prefix,
            escape=escape,
            group_tool_calls=group_tool_calls,
            dangling_tool_calls=dangling_tool_calls,
        )
        return str(result["text"])

    async def render_openai_chat(
        self,
        *,
        context_mode: ContextMode | None = None,
        instructions: str | None = None,
        response_prefix: str | None = None,
        escape: EscapeMode | None = None,
        group_tool_calls: bool | None = None,
        dangling_tool_calls: DanglingToolCalls | None = None,
    ) -> OpenAIChatRequest:
        """The thread as OpenAI Chat Completions ``messages``: ``{"messages": [...]}``.

        Every assistant tool call is answered by its tool message right after it. Spread it into
        the SDK call: ``client.chat.completions.create(model=..., **request)``.
        """
        result: OpenAIChatRender = await self._render_provider(
            "openai-chat", context_mode, instructions, response_prefix, escape, group_tool_calls, dangling_tool_calls
        )
        return {"messages": result["messages"]}

    async def render_openai_responses(
        self,
        *,
        context_mode: ContextMode | None = None,
        instructions: str | None = None,
        response_prefix: str | None = None,
        escape: EscapeMode | None = None,
        group_tool_calls: bool | None = None,
        dangling_tool_calls: DanglingToolCalls | None = None,
    ) -> OpenAIResponsesRequest:
        """The thread as OpenAI Responses API ``{"instructions"?, "input": [...]}``.

        ``client.responses.create(model=..., **request)``.
        """
        result: OpenAIResponsesRender = await self._render_provider(
            "openai-responses", context_mode, instructions, response_prefix, escape, group_tool_calls, dangling_tool_calls
        )
        request: OpenAIResponsesRequest = {"input": result["input"]}
        if "instructions" in result:
            request["instructions"] = result["instructions"]
        return request

    async def render_anthropic(
        self,
        *,
        context_mode: ContextMode | None = None,
        instructions: str | None = None,
        response_prefix: str | None = None,
        escape: EscapeMode | None = None,
        group_tool_calls: bool | None = None,
        dangling_tool_calls: DanglingToolCalls | None = None,
    ) -> AnthropicRequest:
        """The thread as Anthropic Messages API ``{"system"?, "messages": [...]}``.

        ``client.messages.create(model=..., max_tokens=..., **request)``.
        """
        result: AnthropicRender = await self._render_provider(
            "anthropic", context_mode, instructions, response_prefix, escape, group_tool_calls, dangling_tool_calls
        )
        request: AnthropicRequest = {"messages": result["messages"]}
        if "system" in result:
            request["system"] = result["system"]
        return request

    async def _render_provider(
        self,
        format: Literal["openai-chat", "openai-responses", "anthropic"],
        context_mode: ContextMode | None,
        instructions: str | None,
        response_prefix: str | None,
        escape: EscapeMode | None,
        group_tool_calls: bool | None,
        dangling_tool_calls: DanglingToolCalls | None,
    ) -> Any:
        return await self.render(
            format,
            context_mode=context_mode,
            instructions=instructions,
            response_prefix=response_prefix,
            escape=escape,
            group_tool_calls=group_tool_calls,
            dangling_tool_calls=dangling_tool_calls,
        )

    async def events(self, *, offset: int | None = None, limit: int | None = None) -> list[dict[str, Any]]:
        """The stored events, exactly as appended."""
        return (await self.events_page(offset=offset, limit=limit)).events

    async def events_page(self, *, offset: int | None = None, limit: int | None = None) -> EventsPage:
        result = await self._client.request("thread/events", _drop_none(threadId=self.id, offset=offset, limit=limit))
        return EventsPage(result["version"], result["eventCount"], result["events"])

    async def export(self, format: TurnFormat, *, redact_encrypted_content: bool | None = None, omit_data: bool | None = None) -> str:
        """The thread as a turn document (YAML or JSON text)."""
        options = turn_write_options(redact_encrypted_content, omit_data)
        result = await self._client.request("thread/export", _drop_none(threadId=self.id, format=format, options=options or None))
        return str(result["text"])

    async def close(self) -> None:
        """Frees the server's in-memory state; a durable store keeps the thread, the memory store drops it."""
        self._forget_xml_lines()
        await self._client.request("thread/close", {"threadId": self.id})

    async def delete(self) -> bool:
        """Deletes the thread; ``False`` when it was already gone."""
        self._forget_xml_lines()
        return await self._client.delete_thread(self.id)

    async def to_langchain_messages(self, **options: Any) -> list[BaseMessage]:
        """The rendered messages as LangChain ``BaseMessage`` objects (needs ``langchain-core``)."""
        from .langchain import stored_to_langchain_messages

        return stored_to_langchain_messages(await self.render_messages(**options))


class AsyncThreadKeeper:
    """A connection to one threadkeeper server process, speaking protocol v1 over its stdio.

    Create it with ``await AsyncThreadKeeper.spawn()`` (or ``async with await ...spawn() as tk``);
    end it with ``await tk.close()``.
    """

    def __init__(self, connection: Connection, server: InitializeResult) -> None:
        self._connection = connection
        #: The server's answer to ``initialize``.
        self.server = server

    @classmethod
    async def spawn(
        cls,
        binary: str | os.PathLike[str] | None = None,
        args: Sequence[str] | None = None,
        env: Mapping[str, str] | None = None,
        cwd: str | os.PathLike[str] | None = None,
        client_info: Mapping[str, str] | None = None,
    ) -> AsyncThreadKeeper:
        """Starts a server process and initializes it.

        ``args`` go to the server as they are (e.g. ``["--store", "memory"]``); none by default,
        so the server picks its default store.
        """
        path = find_binary(binary, env)
        connection = await Connection.start(path, list(args or []), env, cwd)
        try:
            server = await connection.request(
                "initialize", {"clientInfo": dict(client_info or {"name": "threadkeeper-py"}), "protocolVersion": PROTOCOL_VERSION}
            )
        except BaseException:
            connection.kill()
            await connection.close()
            raise
        limits = server.get("capabilities", {}).get("limits", {})
        if isinstance(limits.get("maxFrameBytes"), int):
            connection.max_frame_bytes = limits["maxFrameBytes"]
        return cls(connection, server)

    async def __aenter__(self) -> AsyncThreadKeeper:
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        await self.close()

    @property
    def binary(self) -> str:
        return self._connection.binary

    @property
    def pid(self) -> int:
        return self._connection.process.pid

    @property
    def returncode(self) -> int | None:
        """The exit status once the process has ended (negative: killed by that signal)."""
        return self._connection.process.returncode

    async def request(self, method: str, params: Any = None) -> Any:
        """Sends any request; returns its result or raises :class:`ThreadKeeperError`."""
        return await self._connection.request(method, params)

    async def notify(self, method: str, params: Any = None) -> None:
        await self._connection.notify(method, params)

    async def wait_closed(self) -> int | None:
        """Waits until the server process has ended; returns its exit status."""
        result: int | None = await self._connection.closed
        return result

    # Threads.

    async def open_thread(
        self, thread_id: str | None = None, *, settings: ThreadSettings | None = None, metadata: Mapping[str, Any] | None = None
    ) -> AsyncThread:
        """Opens a thread (a new one without ``thread_id``); given settings/metadata replace the stored ones."""
        params = _drop_none(threadId=thread_id, settings=settings, metadata=dict(metadata) if metadata is not None else None)
        return AsyncThread(self, ThreadInfo.from_wire(await self.request("thread/open", params)))

    async def list_threads(self) -> list[ThreadInfo]:
        result = await self.request("thread/list", {})
        return [ThreadInfo.from_wire(t) for t in result["threads"]]

    async def delete_thread(self, thread_id: str) -> bool:
        result = await self.request("thread/delete", {"threadId": thread_id})
        return bool(result["deleted"])

    async def import_thread(self, text: str, format: TurnFormat, *, thread_id: str | None = None) -> AsyncThread:
        """Creates a thread from a turn document made by ``thread.export``.

        Without ``thread_id`` the thread gets the document's turn id (the exported thread's id); a
        thread that already exists under that id is not replaced: -32006 (thread exists).
        """
        info = await self.request("thread/import", _drop_none(text=text, format=format, threadId=thread_id))
        return AsyncThread(self, ThreadInfo.from_wire(info))

    # Stateless methods.

    async def escape_xml(self, text: str) -> str:
        return str((await self.request("xml/escape", {"text": text}))["text"])

    async def serialize_thread_to_xml(self, events: Sequence[AnyAgentEvent], *, response_prefix: str | None = None, escape: EscapeMode | None = None) -> str:
        options = _drop_none(responsePrefix=response_prefix, escape=escape)
        params: dict[str, Any] = {"events": list(events)}
        if options:
            params["options"] = options
        return str((await self.request("xml/serializeThread", params))["text"])

    async def parse_thread_xml(self, text: str) -> list[dict[str, Any]]:
        events: list[dict[str, Any]] = (await self.request("xml/parseThread", {"text": text}))["events"]
        return events

    async def messages_to_xml(self, messages: Sequence[StoredMessage]) -> str:
        return str((await self.request("messages/toXml", {"messages": list(messages)}))["text"])

    async def messages_to_text(self, messages: Sequence[StoredMessage]) -> str:
        return str((await self.request("messages/toText", {"messages": list(messages)}))["text"])

    async def parse_tool_calls(self, text: str) -> ParsedToolCalls:
        result: ParsedToolCalls = await self.request("toolCalls/parse", {"text": text})
        return result

    # Turns.

    async def turn_to_yaml(self, turn: Turn, *, redact_encrypted_content: bool | None = None, omit_data: bool | None = None) -> str:
        options = turn_write_options(redact_encrypted_content, omit_data)
        return str((await self.request("turns/toYaml", _drop_none(turn=turn, options=options or None)))["text"])

    async def turn_from_yaml(self, text: str) -> TurnRead:
        result: TurnRead = await self.request("turns/fromYaml", {"text": text})
        return result

    async def turn_to_json(self, turn: Turn, *, redact_encrypted_content: bool | None = None, omit_data: bool | None = None) -> str:
        options = turn_write_options(redact_encrypted_content, omit_data)
        return str((await self.request("turns/toJson", _drop_none(turn=turn, options=options or None)))["text"])

    async def turn_from_json(self, text: str) -> TurnRead:
        result: TurnRead = await self.request("turns/fromJson", {"text": text})
        return result

    async def validate_turn(self, turn: Turn, *, strict: bool | None = None) -> TurnValidation:
        result: TurnValidation = await self.request("turns/validate", _drop_none(turn=turn, strict=strict))
        return result

    async def close(self) -> int | None:
        """Ends the server (``shutdown``, ``exit``); returns its exit status (0 after a clean shutdown).

        Calls made afterwards raise :class:`ServerExitedError`.
        """
        return await self._connection.close()

