"""Wire types of threadkeeper protocol v1. Keys are exactly those on the wire (camelCase).

Events and messages are plain dicts: what is appended comes back unchanged, extra keys and
unknown event types included. The TypedDicts below describe the known shapes for type checkers.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, NewType, Union, final

if sys.version_info >= (3, 11):
    from typing import NotRequired, TypedDict
else:  # pragma: no cover
    from typing_extensions import NotRequired, TypedDict


# Content parts: what a message's ``content`` (or a tool result's) holds when it is a list
# rather than a string. Media are named by ``blob`` (an id in the server's blob store) or ``url``;
# on ``append`` a media part may give its bytes as ``data`` instead (see ``image_part``), which the
# server stores as a blob: read back, the part names the blob and never carries its bytes. The
# parts as read back are ``@final``, so ``if "blob" in part:`` tells a blob part from a URL part.

#: A blob's id: ``"sha256:"`` and the 64 lowercase hex digits of its bytes' SHA-256.
BlobId = str
#: How closely a model looks at an image.
ImageDetail = Literal["auto", "low", "high", "original"]


@final
class TextPart(TypedDict):
    type: Literal["text"]
    text: str


@final
class ImagePart(TypedDict):
    """An image in the blob store; the server adds ``size``, ``width`` and ``height``."""

    type: Literal["image"]
    blob: BlobId
    mediaType: str
    detail: NotRequired[ImageDetail]
    size: NotRequired[int]
    width: NotRequired[int]
    height: NotRequired[int]


@final
class FilePart(TypedDict):
    """A file (a PDF, a text file, ...) in the blob store."""

    type: Literal["file"]
    blob: BlobId
    mediaType: str
    filename: NotRequired[str]
    size: NotRequired[int]


@final
class AudioPart(TypedDict):
    type: Literal["audio"]
    blob: BlobId
    mediaType: str
    size: NotRequired[int]


@final
class ImageUrlPart(TypedDict):
    """An image at an http(s) URL, kept as a reference: the server never fetches it."""

    type: Literal["image"]
    url: str
    mediaType: NotRequired[str]
    detail: NotRequired[ImageDetail]


@final
class FileUrlPart(TypedDict):
    type: Literal["file"]
    url: str
    mediaType: NotRequired[str]
    filename: NotRequired[str]


@final
class AudioUrlPart(TypedDict):
    type: Literal["audio"]
    url: str
    mediaType: NotRequired[str]


#: A media part as kept and read back: named by ``blob`` (or ``url``), never with its bytes.
MediaPart = Union[ImagePart, FilePart, AudioPart, ImageUrlPart, FileUrlPart, AudioUrlPart]
#: One part of a message's (or a tool result's) content, as the server keeps and answers it.
ContentPart = Union[TextPart, MediaPart]

#: Bytes as ``append`` and ``put_blob`` take them: ``bytes``, ``bytearray`` or ``memoryview`` (sent
#: base64-encoded), a ``pathlib.Path`` (the file's bytes), or a ``str`` that is base64 already or a
#: ``data:`` URL (sent as it is).
BinaryData = Union[bytes, bytearray, memoryview, Path, str]


class ImageDataPart(TypedDict):
    """An image given by its bytes; without ``mediaType`` the server reads it from them. See ``image_part``."""

    type: Literal["image"]
    data: BinaryData
    mediaType: NotRequired[str]
    detail: NotRequired[ImageDetail]


class FileDataPart(TypedDict):
    """A file given by its bytes; give ``mediaType`` unless the bytes' type is recognised (PDF, images, audio)."""

    type: Literal["file"]
    data: BinaryData
    mediaType: NotRequired[str]
    filename: NotRequired[str]


class AudioDataPart(TypedDict):
    type: Literal["audio"]
    data: BinaryData
    mediaType: NotRequired[str]


#: A part as ``append`` takes it: a :data:`ContentPart`, or a media part with its bytes.
ContentPartInput = Union[ContentPart, ImageDataPart, FileDataPart, AudioDataPart]


class MessageEvent(TypedDict):
    type: Literal["message"]
    iteration: int
    role: Literal["user", "assistant", "system"]
    #: A string, or content parts.
    content: str | list[ContentPart]
    timestamp: NotRequired[int]
    #: Assistant messages: Gemini's signature of the text part (the ``gemini`` render gives it back).
    thoughtSignature: NotRequired[str]


class ToolCallEvent(TypedDict):
    type: Literal["tool_call"]
    iteration: int
    toolName: str
    toolCallId: str
    args: dict[str, Any]
    timestamp: NotRequired[int]
    #: Gemini's signature of the function call part (the ``gemini`` render gives it back).
    thoughtSignature: NotRequired[str]


class ToolResultEvent(TypedDict):
    """A tool result with its ``result`` (any JSON), and content parts too when it has them."""

    type: Literal["tool_result"]
    iteration: int
    toolCallId: str
    result: Any
    content: NotRequired[list[ContentPart]]
    timestamp: NotRequired[int]


class ToolResultContentEvent(TypedDict):
    """A tool result given as content parts, ``result`` left out or kept (text renders show its text parts)."""

    type: Literal["tool_result"]
    iteration: int
    toolCallId: str
    content: list[ContentPart]
    result: NotRequired[Any]
    timestamp: NotRequired[int]


class ErrorEvent(TypedDict):
    type: Literal["error"]
    iteration: int
    error: str
    recoverable: bool
    toolCallId: NotRequired[str]
    timestamp: NotRequired[int]


class HumanInputRequestedEvent(TypedDict):
    type: Literal["human_input_requested"]
    iteration: int
    question: str
    context: NotRequired[str]
    urgency: NotRequired[Literal["low", "medium", "high"]]
    format: NotRequired[Literal["free_text", "yes_no", "multiple_choice"]]
    choices: NotRequired[list[str]]
    timestamp: NotRequired[int]


class HumanInputReceivedEvent(TypedDict):
    type: Literal["human_input_received"]
    iteration: int
    response: str
    timestamp: NotRequired[int]


class CompletionEvent(TypedDict):
    type: Literal["completion"]
    iteration: int
    result: str
    verified: bool
    timestamp: NotRequired[int]


class SummaryEvent(TypedDict):
    type: Literal["summary"]
    iteration: int
    summarizedIterations: list[int]
    summary: str
    timestamp: NotRequired[int]


#: Whose reasoning it is: the provider whose keys its signature or encrypted form answers to.
ReasoningProvider = Literal["anthropic", "openai", "google", "bedrock"]


class ReasoningEvent(TypedDict):
    """Reasoning a model produced, kept byte for byte; each provider render gives back its own
    provider's and leaves out the rest (protocol/providers/reasoning.md). anthropic: ``text`` +
    ``signature`` (empty text is a real block) or ``redactedData``; openai: ``itemId``,
    ``encryptedContent``, ``summary``; google: ``text`` and/or ``signature``; bedrock: ``text`` +
    ``signature`` or ``redactedData`` (base64)."""

    type: Literal["reasoning"]
    iteration: int
    provider: ReasoningProvider
    timestamp: NotRequired[int]
    #: The model that produced it; a render for another model family leaves it out.
    model: NotRequired[str]
    text: NotRequired[str]
    signature: NotRequired[str]
    redactedData: NotRequired[str]
    encryptedContent: NotRequired[str]
    itemId: NotRequired[str]
    summary: NotRequired[Union[str, list[Any]]]


#: The agent events the server knows, discriminated by ``type``.
AgentEvent = Union[
    MessageEvent,
    ToolCallEvent,
    ToolResultEvent,
    ToolResultContentEvent,
    ErrorEvent,
    HumanInputRequestedEvent,
    HumanInputReceivedEvent,
    CompletionEvent,
    SummaryEvent,
    ReasoningEvent,
]

#: An event of a type the union above does not describe (the server keeps it whole), made
#: explicitly with :func:`custom_event` or ``CustomEvent(d)``; a plain dict literal must be an
#: :data:`AgentEvent`, so a misspelled key or a wrong value fails type checking.
CustomEvent = NewType("CustomEvent", dict[str, Any])


def custom_event(type: str, iteration: int, **fields: Any) -> CustomEvent:
    """An event of a type of your own (or any dict you have read back): ``{"type", "iteration", **fields}``."""
    return CustomEvent({"type": type, "iteration": iteration, **fields})



class MessageEventInput(TypedDict):
    """A message whose media parts may give their bytes (``data``): what ``append`` takes."""

    type: Literal["message"]
    iteration: int
    role: Literal["user", "assistant", "system"]
    content: str | list[ContentPartInput]
    timestamp: NotRequired[int]


class ToolResultEventInput(TypedDict):
    """A tool result whose media parts may give their bytes (``data``): ``result``, ``content`` or both."""

    type: Literal["tool_result"]
    iteration: int
    toolCallId: str
    result: NotRequired[Any]
    content: NotRequired[list[ContentPartInput]]
    timestamp: NotRequired[int]


#: What ``append`` and the XML serializer take: known events, or custom ones made explicitly.
#: ``append`` also takes messages and tool results whose media parts give their bytes (``data``);
#: the client sends them base64-encoded.
EventInput = Union[AgentEvent, MessageEventInput, ToolResultEventInput, CustomEvent]

#: The ``type`` of each event this version knows.
KNOWN_EVENT_TYPES: frozenset[str] = frozenset(
    ["message", "tool_call", "tool_result", "error", "human_input_requested", "human_input_received", "completion", "summary", "reasoning"]
)

#: An event of a type this version does not know (a custom one), as read back: a plain dict.
UnknownAgentEvent = dict[str, Any]

#: An event as read back (``thread.events()``, ``events_page``, ``pop``): narrow it on ``type``;
#: after ``if event["type"] == "tool_call":`` a type checker knows ``event["toolName"]`` and
#: refuses a misspelled key. The union names the known types only, because a type checker stops
#: narrowing a union with a member whose ``type`` is any string. Custom events come back too, as
#: appended: tell them apart with :func:`is_known_event` (or ``KNOWN_EVENT_TYPES``) first.
ReadEvent = AgentEvent

#: Any event as read back, including types this version does not know.
AnyAgentEvent = Union[AgentEvent, UnknownAgentEvent]


def is_known_event(event: AnyAgentEvent) -> bool:
    """Whether ``event`` is of a type this version knows (else a custom event: a plain dict)."""
    return event.get("type") in KNOWN_EVENT_TYPES


class StoredToolCall(TypedDict):
    id: str
    name: str
    args: dict[str, Any]
    type: NotRequired[Literal["tool_call"]]


class StoredMessage(TypedDict):
    """LangChain's stored-message form: ``{"type": "human"|"ai"|"system"|"tool", "data": {...}}``."""

    type: Literal["system", "human", "ai", "tool"]
    data: dict[str, Any]


ContextMode = Literal["standard", "xml"]
EscapeMode = Literal["full", "minimal"]
TurnFormat = Literal["yaml", "json"]
#: Agent hosts' session files ``import_thread`` also reads: a Claude Code session, a Codex rollout.
HostSessionFormat = Literal["claude-code", "codex"]
RenderFormat = Literal["xml", "messages", "text", "openai-chat", "openai-responses", "anthropic", "ai-sdk", "pydantic-ai", "gemini", "bedrock-converse"]
#: What standard mode does with a tool call no result answers: a tool message with
#: ``status: "error"`` (``repair``, the default) or leave the call out (``drop``).
DanglingToolCalls = Literal["repair", "drop"]


# Provider projections (``thread/render`` formats ``openai-chat``, ``openai-responses``, ``anthropic``):
# the request shapes each provider's API takes, written out here so the package needs neither SDK.


class OpenAIChatFunction(TypedDict):
    name: str
    #: The call's arguments as a JSON text.
    arguments: str


class OpenAIChatToolCall(TypedDict):
    id: str
    type: Literal["function"]
    function: OpenAIChatFunction


class OpenAIChatSystemMessage(TypedDict):
    role: Literal["system"]
    content: str


class OpenAIChatUserMessage(TypedDict):
    role: Literal["user"]
    content: str


class OpenAIChatAssistantMessage(TypedDict):
    role: Literal["assistant"]
    #: ``None`` when the message only carries tool calls.
    content: str | None
    tool_calls: NotRequired[list[OpenAIChatToolCall]]


class OpenAIChatToolMessage(TypedDict):
    role: Literal["tool"]
    tool_call_id: str
    content: str


#: One Chat Completions message.
OpenAIChatMessage = Union[OpenAIChatSystemMessage, OpenAIChatUserMessage, OpenAIChatAssistantMessage, OpenAIChatToolMessage]


class OpenAIChatRequest(TypedDict):
    """The Chat Completions request fields: ``client.chat.completions.create(model=..., **request)``."""

    messages: list[OpenAIChatMessage]


class OpenAIChatRender(OpenAIChatRequest):
    """``thread/render`` with format ``openai-chat``."""

    format: Literal["openai-chat"]
    version: int
    contextMode: ContextMode


class OpenAIResponsesMessageItem(TypedDict):
    type: Literal["message"]
    role: Literal["user", "assistant"]
    content: str


class OpenAIResponsesFunctionCallItem(TypedDict):
    type: Literal["function_call"]
    call_id: str
    name: str
    #: The call's arguments as a JSON text.
    arguments: str


class OpenAIResponsesFunctionCallOutputItem(TypedDict):
    type: Literal["function_call_output"]
    call_id: str
    output: str


class OpenAIResponsesReasoningSummary(TypedDict):
    type: Literal["summary_text"]
    text: str


class OpenAIResponsesReasoningItem(TypedDict):
    """An imported ``reasoning`` block, passed back so the model can continue its reasoning."""

    type: Literal["reasoning"]
    id: str
    summary: list[OpenAIResponsesReasoningSummary]
    encrypted_content: str


#: One Responses API input item.
OpenAIResponsesInputItem = Union[
    OpenAIResponsesMessageItem, OpenAIResponsesFunctionCallItem, OpenAIResponsesFunctionCallOutputItem, OpenAIResponsesReasoningItem
]


class OpenAIResponsesRequest(TypedDict):
    """The Responses API request fields: ``client.responses.create(model=..., **request)``."""

    instructions: NotRequired[str]
    input: list[OpenAIResponsesInputItem]


class OpenAIResponsesRender(OpenAIResponsesRequest):
    """``thread/render`` with format ``openai-responses``."""

    format: Literal["openai-responses"]
    version: int
    contextMode: ContextMode


# OpenAI prompt caching (``cache_control`` of ``render_openai_chat`` / ``render_openai_responses``):
# requests rendered with explicit breakpoints send system, user and tool content as text parts.

#: How long OpenAI keeps a breakpoint at least (``prompt_cache_options.ttl``, GPT-5.6 and later).
OpenAICacheTtl = Literal["30m"]


class OpenAICacheControlOptions(TypedDict, total=False):
    """``cache_control`` of the OpenAI renders as an object: ``"auto"`` with these parts overridden."""

    #: ``prompt_cache_key``, 1 to 64 bytes (default: the thread's, a hash of its id).
    key: str
    #: ``"explicit"``: threadkeeper's breakpoints only; ``"implicit"``: OpenAI's implicit one only
    #: (today's messages); ``"none"``: only the key (models before GPT-5.6). Absent: both.
    breakpoints: Literal["explicit", "implicit", "none"]
    ttl: OpenAICacheTtl


#: Prompt caching in the ``openai-chat`` and ``openai-responses`` renders: ``"none"`` (the default:
#: today's request), ``"auto"`` (the thread's ``prompt_cache_key``, ``prompt_cache_options`` and at
#: most 3 explicit breakpoints), or an object overriding parts of ``"auto"``.
OpenAICacheControl = Union[Literal["none", "auto"], OpenAICacheControlOptions]


class OpenAIPromptCacheBreakpoint(TypedDict):
    """``prompt_cache_breakpoint`` on a content part: the prefix up to its end is cached."""

    mode: Literal["explicit"]


class OpenAIPromptCacheOptions(TypedDict):
    mode: Literal["implicit", "explicit"]
    ttl: NotRequired[OpenAICacheTtl]


class OpenAIChatTextPart(TypedDict):
    type: Literal["text"]
    text: str
    prompt_cache_breakpoint: NotRequired[OpenAIPromptCacheBreakpoint]


class OpenAIChatCachedSystemMessage(TypedDict):
    role: Literal["system"]
    #: Text parts; an empty content stays ``""``.
    content: str | list[OpenAIChatTextPart]


class OpenAIChatCachedUserMessage(TypedDict):
    role: Literal["user"]
    content: str | list[OpenAIChatTextPart]


class OpenAIChatCachedToolMessage(TypedDict):
    role: Literal["tool"]
    tool_call_id: str
    content: str | list[OpenAIChatTextPart]


#: One Chat Completions message of a request rendered with ``cache_control``.
OpenAIChatCachedMessage = Union[
    OpenAIChatCachedSystemMessage, OpenAIChatCachedUserMessage, OpenAIChatAssistantMessage, OpenAIChatCachedToolMessage
]


class OpenAIChatCachedRequest(TypedDict):
    """``render_openai_chat(cache_control=...)``: the messages, the key and the cache options."""

    messages: list[OpenAIChatCachedMessage]
    prompt_cache_key: str
    #: Absent with ``breakpoints: "none"``.
    prompt_cache_options: NotRequired[OpenAIPromptCacheOptions]


class OpenAIResponsesTextPart(TypedDict):
    type: Literal["input_text"]
    text: str
    prompt_cache_breakpoint: NotRequired[OpenAIPromptCacheBreakpoint]


class OpenAIResponsesCachedMessageItem(TypedDict):
    """A message as text parts; with explicit breakpoints the system prompt is the first one."""

    type: Literal["message"]
    role: Literal["system", "user"]
    content: list[OpenAIResponsesTextPart]


class OpenAIResponsesCachedFunctionCallOutputItem(TypedDict):
    type: Literal["function_call_output"]
    call_id: str
    output: str | list[OpenAIResponsesTextPart]


#: One Responses API input item of a request rendered with ``cache_control``.
OpenAIResponsesCachedInputItem = Union[
    OpenAIResponsesMessageItem,
    OpenAIResponsesCachedMessageItem,
    OpenAIResponsesFunctionCallItem,
    OpenAIResponsesCachedFunctionCallOutputItem,
    OpenAIResponsesReasoningItem,
]


class OpenAIResponsesCachedRequest(TypedDict):
    """``render_openai_responses(cache_control=...)``: ``instructions`` only without explicit breakpoints."""

    instructions: NotRequired[str]
    input: list[OpenAIResponsesCachedInputItem]
    prompt_cache_key: str
    prompt_cache_options: NotRequired[OpenAIPromptCacheOptions]


class AnthropicCacheControl(TypedDict):
    """A prompt-caching breakpoint (``render_anthropic(cache_control=...)``)."""

    type: Literal["ephemeral"]
    ttl: NotRequired[Literal["5m", "1h"]]


class AnthropicTextBlock(TypedDict):
    type: Literal["text"]
    text: str
    cache_control: NotRequired[AnthropicCacheControl]


class AnthropicToolUseBlock(TypedDict):
    type: Literal["tool_use"]
    #: The tool call id mapped into ``[A-Za-z0-9_-]{1,64}``.
    id: str
    name: str
    input: dict[str, Any]
    cache_control: NotRequired[AnthropicCacheControl]


class AnthropicToolResultBlock(TypedDict):
    type: Literal["tool_result"]
    tool_use_id: str
    content: NotRequired[str]
    is_error: bool
    cache_control: NotRequired[AnthropicCacheControl]


class AnthropicThinkingBlock(TypedDict):
    """Anthropic's own reasoning, given back unmodified at the start of its assistant turn."""

    type: Literal["thinking"]
    thinking: str
    signature: str


class AnthropicRedactedThinkingBlock(TypedDict):
    type: Literal["redacted_thinking"]
    data: str


AnthropicContentBlock = Union[
    AnthropicTextBlock, AnthropicToolUseBlock, AnthropicToolResultBlock, AnthropicThinkingBlock, AnthropicRedactedThinkingBlock
]


class AnthropicMessage(TypedDict):
    role: Literal["user", "assistant"]
    content: list[AnthropicContentBlock]


class AnthropicRequest(TypedDict):
    """The Messages API request fields: ``client.messages.create(model=..., max_tokens=..., **request)``."""

    #: Text blocks when rendered with ``cache_control`` (the last one a breakpoint), else one text.
    system: NotRequired[str | list[AnthropicTextBlock]]
    messages: list[AnthropicMessage]


class AnthropicRender(AnthropicRequest):
    """``thread/render`` with format ``anthropic``."""

    format: Literal["anthropic"]
    version: int
    contextMode: ContextMode


# Gemini ``generateContent`` (format ``gemini``), REST form.

#: ``"auto"`` (default): give back the reasoning the provider produced; ``"none"``: leave it all out.
ReasoningReplay = Literal["auto", "none"]

#: What the first unsigned call of a step in the current turn carries (``"none"``: nothing).
ThoughtSignaturePlaceholder = Literal["skip_thought_signature_validator", "context_engineering_is_the_way_to_go", "none"]


class GeminiFunctionCall(TypedDict):
    id: NotRequired[str]
    name: str
    args: dict[str, Any]


class GeminiFunctionResponse(TypedDict):
    id: NotRequired[str]
    name: str
    response: dict[str, Any]


class GeminiPart(TypedDict, total=False):
    """One part: exactly one of ``text``, ``functionCall``, ``functionResponse``."""

    text: str
    thought: bool
    functionCall: GeminiFunctionCall
    functionResponse: GeminiFunctionResponse
    thoughtSignature: str


class GeminiContent(TypedDict):
    role: Literal["user", "model"]
    parts: list[GeminiPart]


class GeminiSystemInstruction(TypedDict):
    parts: list[GeminiPart]


class GeminiRequest(TypedDict):
    """``{contents, systemInstruction?}``; with google-genai:
    ``client.models.generate_content(model=..., contents=request["contents"], config={"system_instruction": ...})``."""

    contents: list[GeminiContent]
    systemInstruction: NotRequired[GeminiSystemInstruction]


# Amazon Bedrock Converse (format ``bedrock-converse``), JSON wire form.

#: A Converse content block: a dict with exactly one of ``text``, ``toolUse``, ``toolResult``,
#: ``reasoningContent`` (``{"reasoningText": {"text", "signature"}}`` or ``{"redactedContent":
#: base64 text}``), ``cachePoint``.
BedrockContentBlock = dict[str, Any]


class BedrockMessage(TypedDict):
    role: Literal["user", "assistant"]
    content: list[BedrockContentBlock]


class BedrockConverseRequest(TypedDict):
    """``{messages, system?}``: ``client.converse(modelId=..., **request)`` (boto3 wants
    ``redactedContent`` and media ``source.bytes`` as bytes: ``render_bedrock_converse(boto3=True)``
    decodes them)."""

    messages: list[BedrockMessage]
    system: NotRequired[list[BedrockContentBlock]]


class ThreadSettings(TypedDict, total=False):
    contextMode: ContextMode
    instructions: str
    responsePrefix: str


@dataclass(frozen=True)
class SearchHit:
    """One event matching a ``thread/search`` query."""

    thread_id: str
    #: The event's position in ``thread/events``.
    event_index: int
    iteration: int
    #: The event's type.
    type: str
    #: Up to 24 words around the first match, matches between « and ».
    snippet: str
    #: Relevance, higher is better; comparable within one store only.
    score: float
    #: A message's role.
    role: str | None = None

    @classmethod
    def from_wire(cls, value: dict[str, Any]) -> SearchHit:
        return cls(
            thread_id=value["threadId"],
            event_index=value["eventIndex"],
            iteration=value["iteration"],
            type=value["type"],
            snippet=value["snippet"],
            score=value["score"],
            role=value.get("role"),
        )


@dataclass(frozen=True)
class SearchResult:
    """One page of ``thread/search`` hits, best first."""

    hits: list[SearchHit]
    #: Pass as ``cursor`` for the next page; ``None`` on the last one.
    next_cursor: str | None = None

    @classmethod
    def from_wire(cls, value: dict[str, Any]) -> SearchResult:
        return cls(hits=[SearchHit.from_wire(h) for h in value["hits"]], next_cursor=value.get("nextCursor"))


@dataclass(frozen=True)
class ThreadInfo:
    thread_id: str
    #: Number of successful appends; starts at 0.
    version: int
    event_count: int
    settings: ThreadSettings
    metadata: dict[str, Any]
    #: Milliseconds since the Unix epoch.
    created_at: int
    updated_at: int

    @classmethod
    def from_wire(cls, value: dict[str, Any]) -> ThreadInfo:
        return cls(
            thread_id=value["threadId"],
            version=value["version"],
            event_count=value["eventCount"],
            settings=value.get("settings", {}),
            metadata=value.get("metadata", {}),
            created_at=value["createdAt"],
            updated_at=value["updatedAt"],
        )


@dataclass(frozen=True)
class BlobInfo:
    """What the store knows of a blob (``blob/put``, ``blob/stat``)."""

    blob: BlobId
    media_type: str
    size: int
    #: An image's, when its header tells it.
    width: int | None = None
    height: int | None = None

    @classmethod
    def from_wire(cls, value: dict[str, Any]) -> BlobInfo:
        return cls(value["blob"], value["mediaType"], value["size"], value.get("width"), value.get("height"))


@dataclass(frozen=True)
class BlobContent:
    """A blob with its bytes (``blob/get``)."""

    blob: BlobId
    media_type: str
    size: int
    data: bytes
    width: int | None = None
    height: int | None = None


@dataclass(frozen=True)
class AppendResult:
    thread_id: str
    version: int
    event_count: int


@dataclass(frozen=True)
class RollingCompactResult(AppendResult):
    """What a rolling round answers: ``append``'s result and the round's number."""

    round: int


@dataclass(frozen=True)
class XmlDelta:
    """What ``thread/render`` answers for format ``xml`` with ``options.fromEvent``.

    The whole document is ``"<thread>\\n" + (the lines of every event so far) + tail``.
    """

    version: int
    event_count: int
    from_event: int
    #: The ``<event>`` lines of events ``from_event`` to ``event_count - 1``, each ending with ``\\n``.
    lines: str
    #: ``"</thread>"``, plus ``"\\n" + response_prefix`` when there is a prefix.
    tail: str

    @classmethod
    def from_wire(cls, value: dict[str, Any]) -> XmlDelta:
        return cls(value["version"], value["eventCount"], value["fromEvent"], value["lines"], value["tail"])


@dataclass(frozen=True)
class EventsPage:
    version: int
    event_count: int
    events: list[ReadEvent] = field(default_factory=list)


class ParsedToolCall(TypedDict):
    id: str
    name: str
    args: dict[str, Any]


class ParsedToolCalls(TypedDict):
    toolCalls: list[ParsedToolCall]
    content: str


# Turns (geppetto turn documents): snake_case keys on the wire.

BlockKind = Literal["user", "llm_text", "tool_call", "tool_use", "system", "reasoning", "other"]


class Block(TypedDict, total=False):
    id: str
    turn_id: str
    kind: BlockKind
    role: str
    payload: dict[str, Any]
    metadata: dict[str, Any]


class Turn(TypedDict, total=False):
    version: int
    id: str
    run_id: str
    blocks: list[Block]
    metadata: dict[str, Any]
    data: dict[str, Any]


class TurnRead(TypedDict):
    turn: Turn
    warnings: list[str]


class TurnProblem(TypedDict):
    path: str
    message: str


class TurnValidation(TypedDict):
    valid: bool
    problems: list[TurnProblem]


# Context size and compaction (``thread/tokens``, ``thread/planCompaction``, ``thread/compact``).

#: ``estimate`` counts without a vocabulary; the others are OpenAI's BPE vocabularies.
Tokenizer = Literal["estimate", "o200k_base", "cl100k_base"]


class RenderBudget(TypedDict):
    """The ``budget`` render option: drop the oldest iterations until the render fits."""

    maxTokens: int
    #: Once over ``maxTokens``, drop whole oldest iterations until the render is at most this
    #: (at most ``maxTokens``; the default), then keep that cut until ``maxTokens`` is passed again:
    #: consecutive renders share their beginning, which a provider's prompt cache reads cheaply.
    dropTo: NotRequired[int]
    tokenizer: NotRequired[Tokenizer]


class CacheControlTtl(TypedDict):
    """Automatic breakpoints with this lifetime on each."""

    ttl: Literal["5m", "1h"]


#: Prompt-caching breakpoints in the ``anthropic`` render: ``"none"`` (the default: none),
#: ``"auto"`` (placed by Anthropic's caching rules), or ``{"ttl": ...}`` (auto, with that lifetime).
CacheControl = Union[Literal["none", "auto"], CacheControlTtl]


#: A provider's published rule for the tokens of an image or PDF (``options.mediaTokens``).
MediaTokenRule = Literal[
    "anthropic", "openai-tiles", "openai-patches", "openai-patches-mini", "openai-patches-nano", "gemini", "text"
]


class MediaRenderOptions(TypedDict):
    """``options.media``: only the ``keepImages`` newest images (1–10,000) go with their bytes, the
    older ones as their placeholder text; the frontier moves in steps, so a cached prefix breaks
    at most once per ``keepImages + 1`` new images."""

    keepImages: int


class MessagesRenderOptions(TypedDict, total=False):
    """The keyword options of a messages render (``render_messages``, ``to_langchain_messages``,
    ``ThreadChatMessageHistory``); ``None`` leaves one unset."""

    context_mode: ContextMode | None
    instructions: str | None
    response_prefix: str | None
    escape: EscapeMode | None
    group_tool_calls: bool | None
    dangling_tool_calls: DanglingToolCalls | None
    #: Which images go with their bytes: ``{"keepImages": N}`` (protocol/README.md, "Keeping the
    #: newest images").
    media: MediaRenderOptions | None
    #: How token counts measure media parts (protocol/README.md, "Media in renders").
    media_tokens: MediaTokenRule | None


class RenderOptions(MessagesRenderOptions, total=False):
    """The keyword options of ``render``, ``tokens``, ``view`` and ``prompt_cli``; ``None`` leaves one unset."""

    #: Format ``xml`` only: the delta from this event on.
    from_event: int | None
    budget: RenderBudget | None
    #: Formats ``anthropic`` (:data:`CacheControl`), ``openai-chat`` and ``openai-responses``
    #: (:data:`OpenAICacheControl`).
    cache_control: CacheControl | OpenAICacheControl | None
    #: Provider formats only: which reasoning goes back.
    reasoning: ReasoningReplay | None
    #: Provider formats only: the model the request is for (reasoning of another family is left out).
    model: str | None
    #: Format ``gemini`` only.
    thought_signature_placeholder: ThoughtSignaturePlaceholder | None


class IterationTokens(TypedDict):
    iteration: int
    tokens: int


class TokenCount(TypedDict):
    tokens: int
    tokenizer: Tokenizer
    byIteration: list[IterationTokens]


class CompactionPrompt(TypedDict):
    iteration: int
    #: The prompt that asks a model to summarize this iteration.
    prompt: str


class CompactionPlan(TypedDict):
    needed: bool
    tokens: int
    iterations: list[CompactionPrompt]


class IterationSummary(TypedDict):
    iteration: int
    summary: str


# Rolling compaction (``strategy: "rolling"`` of ``thread/planCompaction`` and ``thread/compact``).


class RollingSummarizeStep(TypedDict):
    """Summarize the oldest whole iterations ``iterations[0]`` to ``iterations[1]``."""

    kind: Literal["summarize"]
    iterations: list[int]
    #: threadkeeper's summarizer prompt for the step (may be left out when passed back).
    prompt: NotRequired[str]
    #: The version planned on; the round expects it.
    version: NotRequired[int]


class RollingMergeStep(TypedDict):
    """Merge the live summaries of ``rounds`` (oldest first) into one."""

    kind: Literal["merge"]
    rounds: list[int]
    prompt: NotRequired[str]
    version: NotRequired[int]


RollingStep = Union[RollingSummarizeStep, RollingMergeStep]


class RollingCompactionPlan(TypedDict):
    strategy: Literal["rolling"]
    needed: bool
    #: The tokens of the rendering measured.
    tokens: int
    version: int
    #: What the live summaries' texts take together.
    summaryTokens: int
    #: Present when ``needed``, unless nothing is left to compact.
    step: NotRequired[RollingStep]


@dataclass(frozen=True)
class PopResult:
    """What ``thread/pop`` answers: the removed events, in thread order, and the new version."""

    events: list[ReadEvent]
    version: int


# Prompts for command-line models (``prompt/cli``, ``prompt/parseReply``).


class PromptTool(TypedDict):
    name: str
    description: NotRequired[str]
    #: A JSON Schema of the arguments (``{}`` when left out).
    parameters: NotRequired[dict[str, Any]]


class ParsedReply(TypedDict):
    content: str
    toolCalls: list[ParsedToolCall]
    #: The reply as events, ready for ``thread.append``.
    events: list[EventInput]


class InitializeResult(TypedDict):
    serverInfo: dict[str, Any]
    protocolVersion: int
    capabilities: dict[str, Any]
