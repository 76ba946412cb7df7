"""The asyncio client: :class:`AsyncThreadKeeper` and :class:`AsyncThread`.

Their methods are also the blocking client's (``sync``), run over a blocking connection: a
method added here is offered there by one line in ``sync.py`` (a test fails until it is). So a
method body awaits only the connection (``self.request``, ``self._client.request``), other
methods, and the connection's ``lock()``, never asyncio itself.
"""

from __future__ import annotations

import base64
import os
import sys
from collections.abc import Callable, Coroutine, Generator, Mapping, Sequence
from dataclasses import dataclass, replace
from types import TracebackType
from typing import TYPE_CHECKING, Any, Literal, overload

from ._connection import Connection, Transport
from .discovery import find_binary
from .errors import ErrorCode, ThreadKeeperError
from .parts import encode_events, to_base64
from .types import (
    BedrockConverseRequest,
    GeminiRequest,
    ReasoningReplay,
    ThoughtSignaturePlaceholder,
    MediaRenderOptions,
    MediaTokenRule,
    AnthropicRender,
    AnthropicRequest,
    AppendResult,
    BinaryData,
    BlobContent,
    BlobInfo,
    CacheControl,
    CompactionPlan,
    ContextMode,
    DanglingToolCalls,
    EscapeMode,
    EventInput,
    EventsPage,
    HostSessionFormat,
    InitializeResult,
    IterationSummary,
    MessagesRenderOptions,
    OpenAICacheControl,
    OpenAICacheControlOptions,
    OpenAIChatCachedRequest,
    OpenAIChatRender,
    OpenAIChatRequest,
    OpenAIResponsesCachedRequest,
    OpenAIResponsesRequest,
    ParsedReply,
    ParsedToolCalls,
    PopResult,
    PromptTool,
    ReadEvent,
    RenderBudget,
    RenderFormat,
    RenderOptions,
    RollingCompactionPlan,
    RollingCompactResult,
    RollingStep,
    StoredMessage,
    SearchResult,
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

if sys.version_info >= (3, 11):
    from typing import Unpack
else:  # pragma: no cover
    from typing_extensions import Unpack

if TYPE_CHECKING:
    from langchain_core.messages import BaseMessage

PROTOCOL_VERSION = 1
#: How long ``spawn`` waits for the answer to ``initialize`` by default: a server that does not
#: answer then is not going to.
START_TIMEOUT_S = 30.0


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
    budget: RenderBudget | None = None,
    cache_control: CacheControl | OpenAICacheControl | None = None,
    reasoning: ReasoningReplay | None = None,
    model: str | None = None,
    thought_signature_placeholder: ThoughtSignaturePlaceholder | None = None,
    media_tokens: MediaTokenRule | None = None,
    media: MediaRenderOptions | None = None,
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
        budget=budget,
        cacheControl=cache_control,
        reasoning=reasoning,
        model=model,
        thoughtSignaturePlaceholder=thought_signature_placeholder,
        mediaTokens=media_tokens,
        media=media,
    )


def _decode_blobs(messages: list[Any]) -> None:
    """Bedrock's blobs (``redactedContent``, the ``source.bytes`` of image and document blocks,
    in messages and tool results) as the bytes boto3 takes, in place."""
    import base64

    def decode_media(block: Any) -> None:
        for kind in ("image", "document"):
            media = block.get(kind) if isinstance(block, dict) else None
            source = media.get("source") if isinstance(media, dict) else None
            if isinstance(source, dict) and isinstance(source.get("bytes"), str):
                source["bytes"] = base64.b64decode(source["bytes"])

    for message in messages:
        for block in message["content"]:
            reasoning = block.get("reasoningContent")
            if isinstance(reasoning, dict) and isinstance(reasoning.get("redactedContent"), str):
                reasoning["redactedContent"] = base64.b64decode(reasoning["redactedContent"])
            decode_media(block)
            result = block.get("toolResult")
            if isinstance(result, dict):
                for item in result.get("content") or []:
                    decode_media(item)


def _with_cache_fields(request: dict[str, Any], result: dict[str, Any]) -> dict[str, Any]:
    """``request`` with the prompt-cache fields the render carried (none without ``cache_control``)."""
    for key in ("prompt_cache_key", "prompt_cache_options"):
        if key in result:
            request[key] = result[key]
    return request


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
        self._xml_lock = client._connection.lock()
        #: Bumped when the kept lines are dropped, so a render already in flight does not keep its lines.
        self._xml_generation = 0

    def __repr__(self) -> str:
        return f"AsyncThread(id={self.id!r}, version={self.info.version}, event_count={self.info.event_count})"

    async def append(self, events: Sequence[EventInput], *, expected_version: int | None = None, timeout: float | None = None) -> AppendResult:
        """Appends events, all or none. With ``expected_version``, fails with -32003 unless the thread is at it.

        A media part may give its bytes as ``data`` (``image_part(b"...")``, ``image_part(Path("a.png"))``):
        they are sent base64-encoded, and the server keeps them as a blob, the part then naming it by ``blob``.
        """
        params = _drop_none(threadId=self.id, events=encode_events(events), expectedVersion=expected_version)
        return self._appended(await self._client.request("thread/append", params, timeout=timeout))

    def _appended(self, result: dict[str, Any]) -> AppendResult:
        appended = AppendResult(result["threadId"], result["version"], result["eventCount"])
        self._follow(appended.version, appended.event_count)
        return appended

    def _follow(self, version: int, event_count: int) -> None:
        """Keeps ``info`` in step with what this handle changed."""
        self.info = replace(self.info, version=version, event_count=event_count)

    async def render(self, format: RenderFormat, *, timeout: float | None = None, **options: Unpack[RenderOptions]) -> dict[str, Any]:
        """The full ``thread/render`` result; ``options`` as in :func:`render_xml`, plus ``budget``
        (``{"maxTokens", "dropTo"?, "tokenizer"?}``: the result then has ``dropped`` and ``tokens``)
        and ``cache_control`` (formats ``anthropic``, ``openai-chat`` and ``openai-responses``).
        ``media`` and ``media_tokens`` as in :meth:`render_messages` (``media_tokens`` then also
        decides what the budget counts an image or PDF as)."""
        wire = render_options(**options)
        params: dict[str, Any] = {"threadId": self.id, "format": format}
        if wire:
            params["options"] = wire
        result: dict[str, Any] = await self._client.request("thread/render", params, timeout=timeout)
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
        media: MediaRenderOptions | None = None,
        media_tokens: MediaTokenRule | None = None,
        timeout: float | None = None,
    ) -> str:
        """The ``<thread>`` XML document, with the response prefix (option, else setting) appended.

        With ``incremental=True`` the server sends only the event lines this object has not
        received yet (an XML delta); the object keeps the lines, per escape mode, and assembles
        the document, so a step costs what was appended instead of the whole document. This
        assumes the thread is not deleted and recreated under the same id while this object is
        used, and is not popped or compacted through another handle (this one's ``pop`` and
        ``compact`` drop what it kept): event lines never change otherwise. When the server
        refuses the delta because the thread now has fewer events than kept, or reports a lower
        version than the kept lines were rendered at, the object drops what it kept and renders
        from the first event again.

        ``media`` and ``media_tokens`` are accepted as :meth:`render` takes them; the document names
        every media part by its placeholder, so they change nothing here.
        """
        options: dict[str, Any] = dict(
            response_prefix=response_prefix,
            escape=escape,
            context_mode=context_mode,
            instructions=instructions,
            group_tool_calls=group_tool_calls,
            media=media,
            media_tokens=media_tokens,
        )
        if incremental:
            async with self._xml_lock:
                return await self._render_incremental(options, timeout)
        return str((await self.render("xml", timeout=timeout, **options))["text"])

    async def render_xml_delta(
        self,
        from_event: int,
        *,
        response_prefix: str | None = None,
        escape: EscapeMode | None = None,
        context_mode: ContextMode | None = None,
        instructions: str | None = None,
        group_tool_calls: bool | None = None,
        media: MediaRenderOptions | None = None,
        media_tokens: MediaTokenRule | None = None,
        timeout: float | None = None,
    ) -> XmlDelta:
        """The XML delta from event ``from_event`` on (0 ≤ from_event ≤ event count, else -32602).

        The document is ``"<thread>\\n" + (the lines of every event so far) + delta.tail``.
        """
        result = await self.render(
            "xml",
            timeout=timeout,
            from_event=from_event,
            response_prefix=response_prefix,
            escape=escape,
            context_mode=context_mode,
            instructions=instructions,
            group_tool_calls=group_tool_calls,
            media=media,
            media_tokens=media_tokens,
        )
        return XmlDelta.from_wire(result)

    async def _render_incremental(self, options: dict[str, Any], timeout: float | None) -> str:
        escape = options["escape"] or "full"
        kept = self._xml_lines.get(escape, _NOTHING_KEPT)
        generation = self._xml_generation
        try:
            delta = await self.render_xml_delta(kept.event_count, timeout=timeout, **options)
        except ThreadKeeperError as error:
            if kept.event_count == 0 or not _is_from_event_refused(error):
                raise
            self._forget_xml_lines()
            return await self._render_incremental(options, timeout)
        if delta.version < kept.version:
            self._forget_xml_lines()
            return await self._render_incremental(options, timeout)
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
        media: MediaRenderOptions | None = None,
        media_tokens: MediaTokenRule | None = None,
        timeout: float | None = None,
    ) -> list[StoredMessage]:
        """LangChain stored messages (standard or XML context mode).

        ``media={"keepImages": N}`` sends the bytes of the newest images only, the older ones as
        their placeholder text, with a frontier that moves in steps so a cached prefix stays put
        between moves (protocol "Keeping the newest images"); the provider renders take it alike.
        ``media_tokens`` names the rule token counts measure media by; it goes to the server as
        :meth:`render` sends it, and counts show only in a render with a ``budget``.
        """
        result = await self.render(
            "messages",
            timeout=timeout,
            context_mode=context_mode,
            instructions=instructions,
            response_prefix=response_prefix,
            escape=escape,
            group_tool_calls=group_tool_calls,
            dangling_tool_calls=dangling_tool_calls,
            media=media,
            media_tokens=media_tokens,
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
        media: MediaRenderOptions | None = None,
        media_tokens: MediaTokenRule | None = None,
        timeout: float | None = None,
    ) -> str:
        """The messages as one prompt text (``[User]\\n…`` blocks).

        ``media`` and ``media_tokens`` are accepted as :meth:`render` takes them; the text names
        every media part by its placeholder, so they change nothing here.
        """
        result = await self.render(
            "text",
            timeout=timeout,
            context_mode=context_mode,
            instructions=instructions,
            response_prefix=response_prefix,
            escape=escape,
            group_tool_calls=group_tool_calls,
            dangling_tool_calls=dangling_tool_calls,
            media=media,
            media_tokens=media_tokens,
        )
        return str(result["text"])

    @overload
    async def render_openai_chat(
        self,
        *,
        context_mode: ContextMode | None = None,
        instructions: str | None = None,
        response_prefix: str | None = None,
        escape: EscapeMode | None = None,
        group_tool_calls: bool | None = None,
        dangling_tool_calls: DanglingToolCalls | None = None,
        cache_control: Literal["none"] | None = None,
        media: MediaRenderOptions | None = None,
        media_tokens: MediaTokenRule | None = None,
        timeout: float | None = None,
    ) -> OpenAIChatRequest: ...

    @overload
    async def render_openai_chat(
        self,
        *,
        context_mode: ContextMode | None = None,
        instructions: str | None = None,
        response_prefix: str | None = None,
        escape: EscapeMode | None = None,
        group_tool_calls: bool | None = None,
        dangling_tool_calls: DanglingToolCalls | None = None,
        cache_control: Literal["auto"] | OpenAICacheControlOptions,
        media: MediaRenderOptions | None = None,
        media_tokens: MediaTokenRule | None = None,
        timeout: float | None = None,
    ) -> OpenAIChatCachedRequest: ...

    async def render_openai_chat(
        self,
        *,
        context_mode: ContextMode | None = None,
        instructions: str | None = None,
        response_prefix: str | None = None,
        escape: EscapeMode | None = None,
        group_tool_calls: bool | None = None,
        dangling_tool_calls: DanglingToolCalls | None = None,
        cache_control: OpenAICacheControl | None = None,
        media: MediaRenderOptions | None = None,
        media_tokens: MediaTokenRule | None = None,
        timeout: float | None = None,
    ) -> OpenAIChatRequest | OpenAIChatCachedRequest:
        """The thread as OpenAI Chat Completions ``messages``: ``{"messages": [...]}``.

        Every assistant tool call is answered by its tool message right after it. Spread it into
        the SDK call: ``client.chat.completions.create(model=..., **request)``. With
        ``cache_control`` (``"auto"``, or ``{"key"?, "breakpoints"?, "ttl"?}``) the request also
        carries ``prompt_cache_key`` (the thread's) and ``prompt_cache_options``, and with explicit
        breakpoints system, user and tool content is text parts, at most 3 of them breakpoints.
        ``media`` and ``media_tokens`` as in :meth:`render_messages`.
        """
        result: dict[str, Any] = await self._render_provider(
            "openai-chat",
            context_mode,
            instructions,
            response_prefix,
            escape,
            group_tool_calls,
            dangling_tool_calls,
            timeout,
            cache_control,
            media=media,
            media_tokens=media_tokens,
        )
        return _with_cache_fields({"messages": result["messages"]}, result)  # type: ignore[return-value]

    @overload
    async def render_openai_responses(
        self,
        *,
        context_mode: ContextMode | None = None,
        instructions: str | None = None,
        response_prefix: str | None = None,
        escape: EscapeMode | None = None,
        group_tool_calls: bool | None = None,
        dangling_tool_calls: DanglingToolCalls | None = None,
        cache_control: Literal["none"] | None = None,
        media: MediaRenderOptions | None = None,
        media_tokens: MediaTokenRule | None = None,
        timeout: float | None = None,
    ) -> OpenAIResponsesRequest: ...

    @overload
    async def render_openai_responses(
        self,
        *,
        context_mode: ContextMode | None = None,
        instructions: str | None = None,
        response_prefix: str | None = None,
        escape: EscapeMode | None = None,
        group_tool_calls: bool | None = None,
        dangling_tool_calls: DanglingToolCalls | None = None,
        cache_control: Literal["auto"] | OpenAICacheControlOptions,
        media: MediaRenderOptions | None = None,
        media_tokens: MediaTokenRule | None = None,
        timeout: float | None = None,
    ) -> OpenAIResponsesCachedRequest: ...

    async def render_openai_responses(
        self,
        *,
        context_mode: ContextMode | None = None,
        instructions: str | None = None,
        response_prefix: str | None = None,
        escape: EscapeMode | None = None,
        group_tool_calls: bool | None = None,
        dangling_tool_calls: DanglingToolCalls | None = None,
        cache_control: OpenAICacheControl | None = None,
        media: MediaRenderOptions | None = None,
        media_tokens: MediaTokenRule | None = None,
        timeout: float | None = None,
    ) -> OpenAIResponsesRequest | OpenAIResponsesCachedRequest:
        """The thread as OpenAI Responses API ``{"instructions"?, "input": [...]}``.

        ``client.responses.create(model=..., **request)``. With ``cache_control`` as in
        :meth:`render_openai_chat`; with explicit breakpoints the system prompt is the first input
        item (a system message) instead of ``instructions``. ``media`` and ``media_tokens`` as in
        :meth:`render_messages`.
        """
        result: dict[str, Any] = await self._render_provider(
            "openai-responses",
            context_mode,
            instructions,
            response_prefix,
            escape,
            group_tool_calls,
            dangling_tool_calls,
            timeout,
            cache_control,
            media=media,
            media_tokens=media_tokens,
        )
        request: dict[str, Any] = {"input": result["input"]}
        if "instructions" in result:
            request["instructions"] = result["instructions"]
        return _with_cache_fields(request, result)  # type: ignore[return-value]

    async def render_anthropic(
        self,
        *,
        context_mode: ContextMode | None = None,
        instructions: str | None = None,
        response_prefix: str | None = None,
        escape: EscapeMode | None = None,
        group_tool_calls: bool | None = None,
        dangling_tool_calls: DanglingToolCalls | None = None,
        cache_control: CacheControl | None = None,
        media: MediaRenderOptions | None = None,
        media_tokens: MediaTokenRule | None = None,
        timeout: float | None = None,
    ) -> AnthropicRequest:
        """The thread as Anthropic Messages API ``{"system"?, "messages": [...]}``.

        ``client.messages.create(model=..., max_tokens=..., **request)``. With ``cache_control``
        (``"auto"``, or ``{"ttl": "5m" | "1h"}``) the request carries prompt-caching breakpoints
        (at most 4, placed so the next step's request reads this one's from the cache) and the
        system prompt is a list of text blocks; ``"none"``, the default, sends none. ``media`` and
        ``media_tokens`` as in :meth:`render_messages`.
        """
        result: AnthropicRender = await self._render_provider(
            "anthropic",
            context_mode,
            instructions,
            response_prefix,
            escape,
            group_tool_calls,
            dangling_tool_calls,
            timeout,
            cache_control,
            media=media,
            media_tokens=media_tokens,
        )
        request: AnthropicRequest = {"messages": result["messages"]}
        if "system" in result:
            request["system"] = result["system"]
        return request

    async def render_gemini(
        self,
        *,
        context_mode: ContextMode | None = None,
        instructions: str | None = None,
        response_prefix: str | None = None,
        dangling_tool_calls: DanglingToolCalls | None = None,
        reasoning: ReasoningReplay | None = None,
        model: str | None = None,
        thought_signature_placeholder: ThoughtSignaturePlaceholder | None = None,
        media: MediaRenderOptions | None = None,
        media_tokens: MediaTokenRule | None = None,
        timeout: float | None = None,
    ) -> GeminiRequest:
        """The thread as a Gemini ``generateContent`` body ``{"contents", "systemInstruction"?}`` (REST form).

        Google's thought parts and signatures go back on the parts they came on; the first
        unsigned call of each step in the current turn gets ``thought_signature_placeholder``
        (default ``"skip_thought_signature_validator"``; ``"none"`` leaves it unsigned). ``media``
        and ``media_tokens`` as in :meth:`render_messages`.
        """
        result = await self.render(
            "gemini",
            timeout=timeout,
            context_mode=context_mode,
            instructions=instructions,
            response_prefix=response_prefix,
            dangling_tool_calls=dangling_tool_calls,
            reasoning=reasoning,
            model=model,
            thought_signature_placeholder=thought_signature_placeholder,
            media=media,
            media_tokens=media_tokens,
        )
        request: GeminiRequest = {"contents": result["contents"]}
        if "systemInstruction" in result:
            request["systemInstruction"] = result["systemInstruction"]
        return request

    async def render_bedrock_converse(
        self,
        *,
        context_mode: ContextMode | None = None,
        instructions: str | None = None,
        response_prefix: str | None = None,
        dangling_tool_calls: DanglingToolCalls | None = None,
        reasoning: ReasoningReplay | None = None,
        model: str | None = None,
        cache_control: Literal["none", "auto"] | None = None,
        boto3: bool = False,
        media: MediaRenderOptions | None = None,
        media_tokens: MediaTokenRule | None = None,
        timeout: float | None = None,
    ) -> BedrockConverseRequest:
        """The thread as Amazon Bedrock Converse ``{"messages", "system"?}`` (JSON wire form).

        ``client.converse(modelId=..., **request)``. With ``cache_control="auto"`` it carries
        ``cachePoint`` blocks. The wire form carries ``redactedContent`` and the ``source.bytes``
        of image and document blocks as base64 text; boto3 takes a blob as bytes, so pass
        ``boto3=True`` to get them decoded. ``media`` and ``media_tokens`` as in
        :meth:`render_messages`.
        """
        result = await self.render(
            "bedrock-converse",
            timeout=timeout,
            context_mode=context_mode,
            instructions=instructions,
            response_prefix=response_prefix,
            dangling_tool_calls=dangling_tool_calls,
            reasoning=reasoning,
            model=model,
            cache_control=cache_control,
            media=media,
            media_tokens=media_tokens,
        )
        request: BedrockConverseRequest = {"messages": result["messages"]}
        if "system" in result:
            request["system"] = result["system"]
        if boto3:
            _decode_blobs(request["messages"])
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
        timeout: float | None,
        cache_control: CacheControl | OpenAICacheControl | None = None,
        *,
        media: MediaRenderOptions | None = None,
        media_tokens: MediaTokenRule | None = None,
    ) -> Any:
        return await self.render(
            format,
            timeout=timeout,
            cache_control=cache_control,
            media=media,
            media_tokens=media_tokens,
            context_mode=context_mode,
            instructions=instructions,
            response_prefix=response_prefix,
            escape=escape,
            group_tool_calls=group_tool_calls,
            dangling_tool_calls=dangling_tool_calls,
        )

    async def events(
        self, *, offset: int | None = None, limit: int | None = None, tail: int | None = None, timeout: float | None = None
    ) -> list[ReadEvent]:
        """The stored events, exactly as appended: from ``offset`` (at most ``limit``), or the last ``tail``.

        Narrow each on its ``type``: ``if event["type"] == "tool_call": event["toolName"]``. Events
        of a custom type come back too: see :data:`ReadEvent`."""
        return (await self.events_page(offset=offset, limit=limit, tail=tail, timeout=timeout)).events

    async def events_page(
        self, *, offset: int | None = None, limit: int | None = None, tail: int | None = None, timeout: float | None = None
    ) -> EventsPage:
        params = _drop_none(threadId=self.id, offset=offset, limit=limit, tail=tail)
        result = await self._client.request("thread/events", params, timeout=timeout)
        return EventsPage(result["version"], result["eventCount"], result["events"])

    async def export(
        self, format: TurnFormat, *, redact_encrypted_content: bool | None = None, omit_data: bool | None = None, timeout: float | None = None
    ) -> str:
        """The thread as a turn document (YAML or JSON text)."""
        options = turn_write_options(redact_encrypted_content, omit_data)
        result = await self._client.request("thread/export", _drop_none(threadId=self.id, format=format, options=options or None), timeout=timeout)
        return str(result["text"])

    # Context size and compaction.

    async def tokens(
        self,
        format: RenderFormat = "messages",
        *,
        tokenizer: Tokenizer | None = None,
        timeout: float | None = None,
        **options: Unpack[RenderOptions],
    ) -> TokenCount:
        """How many tokens the thread's render in ``format`` (render options as keyword arguments) takes."""
        params: dict[str, Any] = _drop_none(threadId=self.id, format=format, tokenizer=tokenizer)
        wire = render_options(**options)
        if wire:
            params["options"] = wire
        result: TokenCount = await self._client.request("thread/tokens", params, timeout=timeout)
        return result

    async def view(self, *, timeout: float | None = None, **options: Unpack[RenderOptions]) -> str:
        """The thread as one self-contained HTML page for a person to read (``thread/view``).

        Render options as keyword arguments choose the model input the page shows.
        """
        params: dict[str, Any] = {"threadId": self.id}
        wire = render_options(**options)
        if wire:
            params["options"] = wire
        result: dict[str, str] = await self._client.request("thread/view", params, timeout=timeout)
        return result["html"]

    async def plan_compaction(
        self, *, max_context_tokens: int | None = None, keep_recent_iterations: int | None = None, timeout: float | None = None
    ) -> CompactionPlan:
        """Whether the thread outgrew ``max_context_tokens``, and a summary prompt per iteration to fold."""
        params = _drop_none(threadId=self.id, maxContextTokens=max_context_tokens, keepRecentIterations=keep_recent_iterations)
        result: CompactionPlan = await self._client.request("thread/planCompaction", params, timeout=timeout)
        return result

    async def compact(
        self,
        summaries: Sequence[IterationSummary],
        *,
        keep_recent_iterations: int | None = None,
        expected_version: int | None = None,
        timeout: float | None = None,
    ) -> AppendResult:
        """Appends a summary round for the iterations ``plan_compaction`` (with the same
        ``keep_recent_iterations``) lists; renders then show the compacted view. Answers as ``append``."""
        params = _drop_none(
            threadId=self.id, summaries=list(summaries), keepRecentIterations=keep_recent_iterations, expectedVersion=expected_version
        )
        result = await self._client.request("thread/compact", params, timeout=timeout)
        self._forget_xml_lines()  # the round rewrites the view that XML lines are counted in
        return self._appended(result)

    async def plan_rolling_compaction(
        self,
        *,
        max_tokens: int,
        compact_to: int,
        summary_tokens: int | None = None,
        format: RenderFormat | None = None,
        tokenizer: Tokenizer | None = None,
        timeout: float | None = None,
        **options: Unpack[RenderOptions],
    ) -> RollingCompactionPlan:
        """What the next rolling-compaction round should be, measured on the render of ``format``
        (render options as keyword arguments): when ``needed``, call a model with
        ``plan["step"]["prompt"]``, pass the reply to ``compact_rolling``, then plan again."""
        params: dict[str, Any] = _drop_none(
            threadId=self.id,
            strategy="rolling",
            maxTokens=max_tokens,
            compactTo=compact_to,
            summaryTokens=summary_tokens,
            format=format,
            tokenizer=tokenizer,
        )
        wire = render_options(**options)
        if wire:
            params["options"] = wire
        result: RollingCompactionPlan = await self._client.request("thread/planCompaction", params, timeout=timeout)
        return result

    async def compact_rolling(
        self, step: RollingStep, summary: str, *, expected_version: int | None = None, timeout: float | None = None
    ) -> RollingCompactResult:
        """Records a rolling round: ``summary`` of what the planned ``step`` covers, appended as one
        marked event (the round expects the version the step was planned on)."""
        params = _drop_none(threadId=self.id, strategy="rolling", step=dict(step), summary=summary, expectedVersion=expected_version)
        result = await self._client.request("thread/compact", params, timeout=timeout)
        self._forget_xml_lines()  # the round rewrites the view that XML lines are counted in
        appended = self._appended(result)
        return RollingCompactResult(appended.thread_id, appended.version, appended.event_count, result["round"])

    # Undo and branches.

    async def pop(self, count: int | None = None, *, expected_version: int | None = None, timeout: float | None = None) -> PopResult:
        """Removes the last ``count`` events (1 by default); returns them in thread order."""
        params = _drop_none(threadId=self.id, count=count, expectedVersion=expected_version)
        result = await self._client.request("thread/pop", params, timeout=timeout)
        self._forget_xml_lines()
        popped = PopResult(result["events"], result["version"])
        self._follow(popped.version, max(self.info.event_count - len(popped.events), 0))
        return popped

    async def fork(
        self,
        *,
        at_version: int | None = None,
        at_event: int | None = None,
        new_thread_id: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        timeout: float | None = None,
    ) -> AsyncThread:
        """A new thread holding this one's events (all, or as of ``at_version``, or before ``at_event``)."""
        params = _drop_none(
            threadId=self.id,
            atVersion=at_version,
            atEvent=at_event,
            newThreadId=new_thread_id,
            metadata=dict(metadata) if metadata is not None else None,
        )
        return AsyncThread(self._client, ThreadInfo.from_wire(await self._client.request("thread/fork", params, timeout=timeout)))

    async def prompt_cli(
        self,
        *,
        tools: Sequence[PromptTool] | None = None,
        input_encoding: Literal["xml", "text"] | None = None,
        timeout: float | None = None,
        **options: Unpack[RenderOptions],
    ) -> str:
        """The thread as one prompt for a command-line model (``prompt/cli``)."""
        return await self._client.prompt_cli(thread_id=self.id, tools=tools, input_encoding=input_encoding, timeout=timeout, **options)

    async def close(self, *, timeout: float | None = None) -> None:
        """Frees the server's in-memory state; a durable store keeps the thread, the memory store drops it."""
        self._forget_xml_lines()
        await self._client.request("thread/close", {"threadId": self.id}, timeout=timeout)

    async def delete(self, *, timeout: float | None = None) -> bool:
        """Deletes the thread; ``False`` when it was already gone."""
        self._forget_xml_lines()
        return await self._client.delete_thread(self.id, timeout=timeout)

    async def clear(self, *, timeout: float | None = None) -> ThreadInfo:
        """Deletes the thread and opens it again, empty, under the same id, settings and metadata.

        Two requests, not one: a reader between them sees the thread missing.
        """
        await self.delete(timeout=timeout)
        params = {"threadId": self.id, "settings": self.info.settings, "metadata": self.info.metadata}
        self.info = ThreadInfo.from_wire(await self._client.request("thread/open", params, timeout=timeout))
        return self.info

    # LangChain (needs langchain-core).

    async def to_langchain_messages(self, *, timeout: float | None = None, **options: Unpack[MessagesRenderOptions]) -> list[BaseMessage]:
        """The rendered messages as LangChain ``BaseMessage`` objects (needs ``langchain-core``);
        the options of :meth:`render_messages`."""
        from .langchain import stored_to_langchain_messages

        return stored_to_langchain_messages(await self.render_messages(timeout=timeout, **options))

    async def append_langchain_messages(
        self, messages: Sequence[BaseMessage], *, iteration: int | None = None, expected_version: int | None = None, timeout: float | None = None
    ) -> AppendResult:
        """Appends LangChain messages as events (``messages/toEvents``, then ``thread/append``)."""
        events = await self._client.messages_to_events(messages, iteration=iteration, timeout=timeout)
        return await self.append(events, expected_version=expected_version, timeout=timeout)


class Spawning:
    """What :meth:`AsyncThreadKeeper.spawn` returns: await it for the client, or use it directly
    as ``async with AsyncThreadKeeper.spawn() as tk:``, which closes the server on the way out."""

    def __init__(self, start: Callable[[], Coroutine[Any, Any, AsyncThreadKeeper]]) -> None:
        self._start = start
        self._client: AsyncThreadKeeper | None = None

    def __await__(self) -> Generator[Any, None, AsyncThreadKeeper]:
        return self._start().__await__()

    async def __aenter__(self) -> AsyncThreadKeeper:
        self._client = await self._start()
        return self._client

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        if self._client is not None:
            await self._client.close()


class AsyncThreadKeeper:
    """A connection to one threadkeeper server process, speaking protocol v1 over its stdio.

    ``async with AsyncThreadKeeper.spawn() as tk: ...``, or ``tk = await AsyncThreadKeeper.spawn()``
    and ``await tk.close()`` at the end.
    """

    def __init__(self, connection: Transport, server: InitializeResult, timeout: float | None = None) -> None:
        self._connection = connection
        #: The server's answer to ``initialize``.
        self.server = server
        #: Seconds a call waits for its answer when it gives no ``timeout`` of its own (``None``: no limit).
        self.timeout = timeout

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
    ) -> Spawning:
        """Starts a server process and initializes it: ``async with AsyncThreadKeeper.spawn() as tk``
        or ``tk = await AsyncThreadKeeper.spawn()``.

        ``args`` go to the server as they are (e.g. ``["--store", "memory"]``); none by default,
        so the server picks its default store. ``timeout`` is the default of every call (seconds;
        ``None``, the default, waits as long as the call takes). ``start_timeout`` bounds the wait
        for the server's answer to ``initialize`` (process start included).
        """
        return Spawning(lambda: cls._start(binary, args, env, cwd, client_info, timeout, start_timeout))

    @classmethod
    async def _start(
        cls,
        binary: str | os.PathLike[str] | None,
        args: Sequence[str] | None,
        env: Mapping[str, str] | None,
        cwd: str | os.PathLike[str] | None,
        client_info: Mapping[str, str] | None,
        timeout: float | None,
        start_timeout: float | None = START_TIMEOUT_S,
    ) -> AsyncThreadKeeper:
        connection = await Connection.start(find_binary(binary, env), list(args or []), env, cwd)
        return await cls._initialize(connection, client_info, timeout, start_timeout)

    @classmethod
    async def _initialize(
        cls, connection: Transport, client_info: Mapping[str, str] | None, timeout: float | None, start_timeout: float | None
    ) -> AsyncThreadKeeper:
        """Sends ``initialize`` on a started connection; on any failure the process is ended."""
        try:
            server = await connection.request(
                "initialize",
                {"clientInfo": dict(client_info or {"name": "threadkeeper-py"}), "protocolVersion": PROTOCOL_VERSION},
                timeout=start_timeout,
            )
        except BaseException:
            connection.kill()
            await connection.close()
            raise
        limits = server.get("capabilities", {}).get("limits", {})
        if isinstance(limits.get("maxFrameBytes"), int):
            connection.max_frame_bytes = limits["maxFrameBytes"]
        return cls(connection, server, timeout)

    async def __aenter__(self) -> AsyncThreadKeeper:
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        await self.close()

    @property
    def binary(self) -> str:
        return self._connection.binary

    @property
    def pid(self) -> int:
        return self._connection.pid

    @property
    def returncode(self) -> int | None:
        """The exit status once the process has ended (negative: killed by that signal)."""
        return self._connection.returncode

    async def request(self, method: str, params: Any = None, *, timeout: float | None = None) -> Any:
        """Sends any request; returns its result or raises :class:`ThreadKeeperError`.

        ``timeout`` (seconds) overrides the client's default; ``math.inf`` waits without limit.
        When it passes, the call raises :class:`RequestTimeoutError` and the server is sent
        ``$/cancelRequest`` for it.
        """
        return await self._connection.request(method, params, self.timeout if timeout is None else timeout)

    async def notify(self, method: str, params: Any = None) -> None:
        await self._connection.notify(method, params)

    async def wait_closed(self) -> int | None:
        """Waits until the server process has ended; returns its exit status."""
        return await self._connection.wait_closed()

    # Threads.

    async def open_thread(
        self,
        thread_id: str | None = None,
        *,
        settings: ThreadSettings | None = None,
        metadata: Mapping[str, Any] | None = None,
        timeout: float | None = None,
    ) -> AsyncThread:
        """Opens a thread (a new one without ``thread_id``); given settings/metadata replace the stored ones."""
        params = _drop_none(threadId=thread_id, settings=settings, metadata=dict(metadata) if metadata is not None else None)
        return AsyncThread(self, ThreadInfo.from_wire(await self.request("thread/open", params, timeout=timeout)))

    async def list_threads(self, *, timeout: float | None = None) -> list[ThreadInfo]:
        result = await self.request("thread/list", {}, timeout=timeout)
        return [ThreadInfo.from_wire(t) for t in result["threads"]]

    async def search(
        self,
        query: str,
        *,
        limit: int | None = None,
        cursor: str | None = None,
        thread_ids: Sequence[str] | None = None,
        types: Sequence[str] | None = None,
        since: float | None = None,
        until: float | None = None,
        timeout: float | None = None,
    ) -> SearchResult:
        """The events of every stored thread matching ``query``, best first, one page
        (``thread/search``: words, "phrases", prefix* and -excluded terms). Pass
        ``next_cursor`` back as ``cursor`` for the next page. A malformed query, limit, cursor
        or filter raises ``ThreadKeeperError`` -32602 whose ``data["path"]`` names the field."""
        params: dict[str, Any] = {"query": query}
        for name, value in (("limit", limit), ("cursor", cursor), ("since", since), ("until", until)):
            if value is not None:
                params[name] = value
        if thread_ids is not None:
            params["threadIds"] = list(thread_ids)
        if types is not None:
            params["types"] = list(types)
        return SearchResult.from_wire(await self.request("thread/search", params, timeout=timeout))

    async def delete_thread(self, thread_id: str, *, timeout: float | None = None) -> bool:
        result = await self.request("thread/delete", {"threadId": thread_id}, timeout=timeout)
        return bool(result["deleted"])

    async def import_thread(
        self,
        text: str,
        format: TurnFormat | HostSessionFormat,
        *,
        thread_id: str | None = None,
        branches: bool | None = None,
        timeout: float | None = None,
    ) -> AsyncThread:
        """Creates a thread from a turn document made by ``thread.export``.

        Without ``thread_id`` the thread gets the document's turn id (the exported thread's id); a
        thread that already exists under that id is not replaced: -32006 (thread exists). With format
        ``"claude-code"`` or ``"codex"``, ``text`` is an agent host's session file, read as the thread the
        host would resume (``branches``: other branches and sidechains become threads of their own).
        """
        params = _drop_none(text=text, format=format, threadId=thread_id)
        if branches is not None:
            params["options"] = {"branches": branches}
        info = await self.request("thread/import", params, timeout=timeout)
        return AsyncThread(self, ThreadInfo.from_wire(info))

    # Blobs.

    async def put_blob(self, data: BinaryData, *, media_type: str | None = None, timeout: float | None = None) -> BlobInfo:
        """Keeps bytes in the blob store (``blob/put``): their id (``sha256:...``, the same for the same
        bytes), media type, size and an image's dimensions; a part can then name the blob.

        ``data`` is ``bytes``, ``bytearray``, ``memoryview``, a ``Path`` (the file's bytes), or a ``str``
        that is base64 or a ``data:`` URL. Without ``media_type`` the server reads it from the bytes. A
        type the bytes contradict, bad base64 or empty data is -32602; bytes over ``maxBlobBytes``, -32004.
        """
        params = _drop_none(data=to_base64(data), mediaType=media_type)
        return BlobInfo.from_wire(await self.request("blob/put", params, timeout=timeout))

    async def get_blob(self, blob: str, *, timeout: float | None = None) -> BlobContent:
        """A blob with its bytes (``blob/get``); a blob the store does not hold is -32602."""
        result = await self.request("blob/get", {"blob": blob}, timeout=timeout)
        info = BlobInfo.from_wire(result)
        return BlobContent(info.blob, info.media_type, info.size, base64.b64decode(result["data"]), info.width, info.height)

    async def stat_blob(self, blob: str, *, timeout: float | None = None) -> BlobInfo:
        """What the store knows of a blob, without its bytes (``blob/stat``); one it does not hold is -32602."""
        return BlobInfo.from_wire(await self.request("blob/stat", {"blob": blob}, timeout=timeout))

    # Stateless methods.

    async def escape_xml(self, text: str, *, timeout: float | None = None) -> str:
        return str((await self.request("xml/escape", {"text": text}, timeout=timeout))["text"])

    async def serialize_thread_to_xml(
        self, events: Sequence[EventInput], *, response_prefix: str | None = None, escape: EscapeMode | None = None, timeout: float | None = None
    ) -> str:
        options = _drop_none(responsePrefix=response_prefix, escape=escape)
        params: dict[str, Any] = {"events": list(events)}
        if options:
            params["options"] = options
        return str((await self.request("xml/serializeThread", params, timeout=timeout))["text"])

    async def parse_thread_xml(self, text: str, *, timeout: float | None = None) -> list[ReadEvent]:
        events: list[ReadEvent] = (await self.request("xml/parseThread", {"text": text}, timeout=timeout))["events"]
        return events

    async def messages_to_xml(self, messages: Sequence[StoredMessage], *, timeout: float | None = None) -> str:
        return str((await self.request("messages/toXml", {"messages": list(messages)}, timeout=timeout))["text"])

    async def messages_to_text(self, messages: Sequence[StoredMessage], *, timeout: float | None = None) -> str:
        return str((await self.request("messages/toText", {"messages": list(messages)}, timeout=timeout))["text"])

    async def parse_tool_calls(self, text: str, *, timeout: float | None = None) -> ParsedToolCalls:
        result: ParsedToolCalls = await self.request("toolCalls/parse", {"text": text}, timeout=timeout)
        return result

    # Inverse conversions: the renders' forms back to events.

    async def stored_messages_to_events(
        self, messages: Sequence[StoredMessage], *, iteration: int | None = None, timeout: float | None = None
    ) -> list[EventInput]:
        """LangChain stored messages (the ``messages`` render's form) as events (``messages/toEvents``)."""
        params = _drop_none(messages=list(messages), iteration=iteration)
        events: list[EventInput] = (await self.request("messages/toEvents", params, timeout=timeout))["events"]
        return events

    async def messages_to_events(
        self, messages: Sequence[BaseMessage], *, iteration: int | None = None, timeout: float | None = None
    ) -> list[EventInput]:
        """LangChain messages as events: ``messages_to_dict``, then ``messages/toEvents`` (needs ``langchain-core``)."""
        from .langchain import langchain_to_stored_messages

        return await self.stored_messages_to_events(langchain_to_stored_messages(messages), iteration=iteration, timeout=timeout)

    async def responses_to_events(
        self, items: Sequence[Mapping[str, Any]], *, iteration: int | None = None, timeout: float | None = None
    ) -> list[EventInput]:
        """OpenAI Responses input items as events (``responses/toEvents``)."""
        params = _drop_none(items=[dict(item) for item in items], iteration=iteration)
        events: list[EventInput] = (await self.request("responses/toEvents", params, timeout=timeout))["events"]
        return events

    # Prompts for command-line models.

    async def prompt_cli(
        self,
        *,
        thread_id: str | None = None,
        messages: Sequence[StoredMessage] | None = None,
        tools: Sequence[PromptTool] | None = None,
        input_encoding: Literal["xml", "text"] | None = None,
        timeout: float | None = None,
        **options: Unpack[RenderOptions],
    ) -> str:
        """One prompt text for a command-line model, from a thread or stored messages (``prompt/cli``)."""
        params = _drop_none(
            threadId=thread_id,
            messages=list(messages) if messages is not None else None,
            tools=list(tools) if tools is not None else None,
            inputEncoding=input_encoding,
        )
        wire = render_options(**options)
        if wire:
            params["options"] = wire
        return str((await self.request("prompt/cli", params, timeout=timeout))["prompt"])

    async def parse_reply(self, text: str, iteration: int, *, timeout: float | None = None) -> ParsedReply:
        """A command-line model's reply as its text, tool calls and the events to append (``prompt/parseReply``)."""
        result: ParsedReply = await self.request("prompt/parseReply", {"text": text, "iteration": iteration}, timeout=timeout)
        return result

    # Turns.

    async def turn_to_yaml(
        self, turn: Turn, *, redact_encrypted_content: bool | None = None, omit_data: bool | None = None, timeout: float | None = None
    ) -> str:
        options = turn_write_options(redact_encrypted_content, omit_data)
        return str((await self.request("turns/toYaml", _drop_none(turn=turn, options=options or None), timeout=timeout))["text"])

    async def turn_from_yaml(self, text: str, *, timeout: float | None = None) -> TurnRead:
        result: TurnRead = await self.request("turns/fromYaml", {"text": text}, timeout=timeout)
        return result

    async def turn_to_json(
        self, turn: Turn, *, redact_encrypted_content: bool | None = None, omit_data: bool | None = None, timeout: float | None = None
    ) -> str:
        options = turn_write_options(redact_encrypted_content, omit_data)
        return str((await self.request("turns/toJson", _drop_none(turn=turn, options=options or None), timeout=timeout))["text"])

    async def turn_from_json(self, text: str, *, timeout: float | None = None) -> TurnRead:
        result: TurnRead = await self.request("turns/fromJson", {"text": text}, timeout=timeout)
        return result

    async def validate_turn(self, turn: Turn, *, strict: bool | None = None, timeout: float | None = None) -> TurnValidation:
        result: TurnValidation = await self.request("turns/validate", _drop_none(turn=turn, strict=strict), timeout=timeout)
        return result

    async def close(self) -> int | None:
        """Ends the server (``shutdown``, ``exit``); returns its exit status (0 after a clean shutdown).

        Calls made afterwards raise :class:`ServerExitedError`.
        """
        return await self._connection.close()
