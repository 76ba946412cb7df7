/**
 * Wire types of threadkeeper protocol v1. Field names are exactly those on the wire.
 */

/**
 * Fields every agent event has. The event types list exactly their fields, with no catch-all,
 * so a misspelled or misplaced field fails to compile; an event that carries extra fields (the
 * server keeps them) is written as `WithExtraFields<ToolCallEvent>`, on purpose.
 */
export interface EventBase {
  iteration: number;
  /** Milliseconds since the Unix epoch. */
  timestamp?: number;
}

/**
 * A message. `content` is a string, or content parts (text, image, file, audio). `Part` is the
 * parts' type: `ContentPart` (media named by `blob` or `url`) as the server answers and keeps
 * them; `MessageEventInput` also takes parts that carry their bytes (`data`), for `append`.
 */
export interface MessageEvent<Part extends ContentPartInput = ContentPart> extends EventBase {
  type: "message";
  role: "user" | "assistant" | "system";
  content: string | Part[];
  /** Assistant messages: Gemini's signature of the text part, given back on it by the `gemini` render. */
  thoughtSignature?: string;
}

export interface ToolCallEvent extends EventBase {
  type: "tool_call";
  toolName: string;
  toolCallId: string;
  args: Record<string, unknown>;
  /** Gemini's signature of the function call part, given back on it by the `gemini` render. */
  thoughtSignature?: string;
}

/** A tool result with its `result` (any JSON), and content parts too when it has them. */
export interface ToolResultValueEvent<Part extends ContentPartInput = ContentPart> extends EventBase {
  type: "tool_result";
  toolCallId: string;
  result: unknown;
  content?: Part[];
}

/**
 * A tool result given as content parts, with `result` left out or kept: text renders then
 * show its text parts.
 */
export interface ToolResultContentEvent<Part extends ContentPartInput = ContentPart> extends EventBase {
  type: "tool_result";
  toolCallId: string;
  result?: unknown;
  content: Part[];
}

/** A tool result: a `result`, or `content` parts, or both. `Part` as in `MessageEvent`. */
export type ToolResultEvent<Part extends ContentPartInput = ContentPart> = ToolResultValueEvent<Part> | ToolResultContentEvent<Part>;

export interface ErrorEvent extends EventBase {
  type: "error";
  error: string;
  recoverable: boolean;
  toolCallId?: string;
}

export interface HumanInputRequestedEvent extends EventBase {
  type: "human_input_requested";
  question: string;
  context?: string;
  urgency?: "low" | "medium" | "high";
  format?: "free_text" | "yes_no" | "multiple_choice";
  choices?: string[];
}

export interface HumanInputReceivedEvent extends EventBase {
  type: "human_input_received";
  response: string;
}

export interface CompletionEvent extends EventBase {
  type: "completion";
  result: string;
  verified: boolean;
}

export interface SummaryEvent extends EventBase {
  type: "summary";
  summarizedIterations: number[];
  summary: string;
}

/** Whose reasoning it is: the provider whose keys its signature or encrypted form answers to. */
export type ReasoningProvider = "anthropic" | "openai" | "google" | "bedrock";

/**
 * Reasoning a model produced, kept byte for byte; each provider render gives back its own
 * provider's and leaves out the rest (protocol/providers/reasoning.md). anthropic: `text` +
 * `signature` (a thinking block; empty text is real) or `redactedData`; openai: `itemId`,
 * `encryptedContent`, `summary`; google: `text` and/or `signature` (a thought part); bedrock:
 * `text` + `signature` or `redactedData` (base64).
 */
export interface ReasoningEvent extends EventBase {
  type: "reasoning";
  provider: ReasoningProvider;
  /** The model that produced it; a render for another model family leaves it out. */
  model?: string;
  text?: string;
  signature?: string;
  redactedData?: string;
  encryptedContent?: string;
  itemId?: string;
  summary?: string | (string | { type: "summary_text"; text: string })[];
}

/** The agent events the server knows, discriminated by `type`. */
export type AgentEvent =
  | MessageEvent
  | ToolCallEvent
  | ToolResultEvent
  | ErrorEvent
  | HumanInputRequestedEvent
  | HumanInputReceivedEvent
  | CompletionEvent
  | SummaryEvent
  | ReasoningEvent;

export type AgentEventType = AgentEvent["type"];

/** A known event that also carries fields of the caller's own; the server keeps them. */
export type WithExtraFields<E extends AgentEvent> = E & { [extra: string]: unknown };

declare const unknownEventBrand: unique symbol;

/**
 * The `type` of an `UnknownAgentEvent`. At run time it is the event's own type string; to the
 * compiler it is a marked literal that no known type (nor any literal you write) is equal to.
 * So `if (event.type === "tool_call")` narrows an `AnyAgentEvent` to `ToolCallEvent` alone
 * (a plain `string` there would keep the unknown form in, and with it any field name), the
 * unknown form stays in the other branch and in a `switch`'s `default`, and an object literal
 * is always checked against the known event its `type` names. Compare an unknown event's type
 * as a string: `isUnknownEvent(event) && (event.type as string) === "approval"`.
 */
export type UnknownEventType = "(unknown event type)" & { readonly [unknownEventBrand]: true };

/**
 * An event of a type this version does not know; the server keeps it whole. Made only by
 * `unknownEvent()` (or read back from the server), so a known event with a mistake in it is
 * never taken for one.
 */
export interface UnknownAgentEvent {
  type: UnknownEventType;
  iteration: number;
  timestamp?: number;
  [extra: string]: unknown;
}

/** What a thread holds: known events, and events of newer types passed through as they are. */
export type AnyAgentEvent = AgentEvent | UnknownAgentEvent;

/** A message whose parts may carry their bytes (`data`): what `append` takes. */
export type MessageEventInput = MessageEvent<ContentPartInput>;

/** A tool result whose parts may carry their bytes (`data`): what `append` takes. */
export type ToolResultEventInput = ToolResultEvent<ContentPartInput>;

/**
 * What `thread.append()` takes: any event, with messages' and tool results' media parts given
 * by their bytes (`data`) too. The client sends the bytes base64-encoded; the server stores
 * them as a blob and keeps the part with `blob` (see `ContentPart`).
 */
export type AgentEventInput = AnyAgentEvent | MessageEventInput | ToolResultEventInput;

// Content parts and blobs.

/** A blob's id: `"sha256:"` and the 64 lowercase hex digits of its bytes' SHA-256. */
export type BlobId = `sha256:${string}`;

/** How closely a model looks at an image (`auto`, `low`, `high`, `original`). */
export type ImageDetail = "auto" | "low" | "high" | "original";

export interface TextPart {
  type: "text";
  text: string;
}

/**
 * An image in the blob store. The server adds what it knows of the bytes: `size`, `width` and
 * `height` (and `mediaType` when the bytes were given without one).
 */
export interface ImagePart {
  type: "image";
  blob: BlobId;
  mediaType: string;
  detail?: ImageDetail;
  size?: number;
  width?: number;
  height?: number;
  url?: never;
  data?: never;
}

/** A file (a PDF, a text file, …) in the blob store. */
export interface FilePart {
  type: "file";
  blob: BlobId;
  mediaType: string;
  filename?: string;
  size?: number;
  url?: never;
  data?: never;
}

/** Audio in the blob store. */
export interface AudioPart {
  type: "audio";
  blob: BlobId;
  mediaType: string;
  size?: number;
  url?: never;
  data?: never;
}

/** An image at an http(s) URL, kept as a reference: the server never fetches it. */
export interface ImageUrlPart {
  type: "image";
  url: string;
  mediaType?: string;
  detail?: ImageDetail;
  blob?: never;
  data?: never;
}

/** A file at an http(s) URL, kept as a reference. */
export interface FileUrlPart {
  type: "file";
  url: string;
  mediaType?: string;
  filename?: string;
  blob?: never;
  data?: never;
}

/** Audio at an http(s) URL, kept as a reference. */
export interface AudioUrlPart {
  type: "audio";
  url: string;
  mediaType?: string;
  blob?: never;
  data?: never;
}

/** A media part as kept and read back: named by `blob` (or `url`), never with its bytes. */
export type MediaPart = ImagePart | FilePart | AudioPart | ImageUrlPart | FileUrlPart | AudioUrlPart;

/** One part of a message's (or a tool result's) content, as the server keeps it and answers it. */
export type ContentPart = TextPart | MediaPart;

/**
 * A part's bytes as `append` and `putBlob` take them: bytes (a `Uint8Array`, so a `Buffer`),
 * which the client sends base64-encoded, or a string that is already base64 or a `data:` URL.
 */
export type BinaryData = Uint8Array | string;

/** An image given by its bytes; `mediaType`, when left out, is read from them. Made by `imagePart()`. */
export interface ImageDataPart {
  type: "image";
  data: BinaryData;
  mediaType?: string;
  detail?: ImageDetail;
  blob?: never;
  url?: never;
}

/** A file given by its bytes; give `mediaType` unless the bytes' type is recognised (PDF, images…). Made by `filePart()`. */
export interface FileDataPart {
  type: "file";
  data: BinaryData;
  mediaType?: string;
  filename?: string;
  blob?: never;
  url?: never;
}

/** Audio given by its bytes. Made by `audioPart()`. */
export interface AudioDataPart {
  type: "audio";
  data: BinaryData;
  mediaType?: string;
  blob?: never;
  url?: never;
}

/** A part as `append` takes it: a `ContentPart`, or a media part with its bytes. */
export type ContentPartInput = ContentPart | ImageDataPart | FileDataPart | AudioDataPart;

/** What the store knows of a blob (`blob/put`, `blob/stat`). */
export interface BlobInfo {
  blob: BlobId;
  mediaType: string;
  size: number;
  /** An image's, when its header tells it. */
  width?: number;
  height?: number;
}

/** A blob with its bytes (`blob/get`). */
export interface BlobContent extends BlobInfo {
  data: Uint8Array;
}

const KNOWN_EVENT_TYPES: ReadonlySet<string> = new Set<AgentEventType>([
  "message",
  "tool_call",
  "tool_result",
  "error",
  "human_input_requested",
  "human_input_received",
  "completion",
  "summary",
  "reasoning",
]);

/** Narrows an event to the known union. */
export function isKnownEvent(event: AnyAgentEvent): event is AgentEvent {
  return KNOWN_EVENT_TYPES.has(event.type);
}

/** Narrows an event to an event of a type the known union does not have. */
export function isUnknownEvent(event: AnyAgentEvent): event is UnknownAgentEvent {
  return !KNOWN_EVENT_TYPES.has(event.type);
}

/**
 * An event of a type the known union does not have (a newer server's, or the caller's own),
 * for `append`. A known `type` is refused (at compile time, and at run time for values that
 * escape the types): write those as `AgentEvent`s so their fields are checked.
 */
export function unknownEvent<T extends string>(
  event: { type: T extends AgentEventType ? never : T; iteration: number; timestamp?: number } & Record<string, unknown>,
): UnknownAgentEvent {
  if (KNOWN_EVENT_TYPES.has(event.type)) {
    throw new TypeError(`unknownEvent: "${event.type}" is a known event type; write it as an AgentEvent`);
  }
  return event as unknown as UnknownAgentEvent;
}

/** A tool call as LangChain stores it on an AI message. */
export interface StoredToolCall {
  id: string;
  name: string;
  args: Record<string, unknown>;
  type?: "tool_call";
}

export interface StoredMessageData {
  content: string;
  [extra: string]: unknown;
}

/** LangChain's stored-message form (`mapStoredMessagesToChatMessages` / `messages_from_dict`). */
export type StoredMessage =
  | { type: "system"; data: StoredMessageData }
  | { type: "human"; data: StoredMessageData }
  | { type: "ai"; data: StoredMessageData & { tool_calls?: StoredToolCall[] } }
  | { type: "tool"; data: StoredMessageData & { tool_call_id: string } };

export type ContextMode = "standard" | "xml";
export type EscapeMode = "full" | "minimal";
/**
 * What standard mode does with a tool call no result answers: a tool message with
 * `status: "error"` (`"repair"`, the default) or leave the call out (`"drop"`).
 */
export type DanglingToolCalls = "repair" | "drop";
export type RenderFormat =
  | "xml"
  | "messages"
  | "text"
  | "openai-chat"
  | "openai-responses"
  | "anthropic"
  | "ai-sdk"
  | "pydantic-ai"
  | "gemini"
  | "bedrock-converse";

export interface ThreadSettings {
  contextMode?: ContextMode;
  instructions?: string;
  responsePrefix?: string;
}

export interface ThreadInfo {
  threadId: string;
  /** Number of successful appends; starts at 0. */
  version: number;
  eventCount: number;
  settings: ThreadSettings;
  metadata: Record<string, unknown>;
  /** Milliseconds since the Unix epoch. */
  createdAt: number;
  updatedAt: number;
}

/** `thread/search`'s params (see the protocol's query language: words, "phrases", prefix*, -excluded). */
export interface SearchParams {
  query: string;
  /** Hits per page, 1 to 100 (default 20). */
  limit?: number;
  /** A previous page's `nextCursor`. */
  cursor?: string;
  /** Only these threads (1 to 100 ids). */
  threadIds?: string[];
  /** Only events of these types (1 to 16). */
  types?: string[];
  /** Only events whose `timestamp` (ms since the epoch) is at least this. */
  since?: number;
  /** Only events whose `timestamp` is before this. */
  until?: number;
}

/** One matching event. */
export interface SearchHit {
  threadId: string;
  /** The event's position in `thread/events`. */
  eventIndex: number;
  iteration: number;
  /** The event's type. */
  type: string;
  /** A message's role. */
  role?: string;
  /** Up to 24 words around the first match, matches between « and ». */
  snippet: string;
  /** Relevance, higher is better; comparable within one store only. */
  score: number;
}

/** One page of hits, best first. */
export interface SearchResult {
  hits: SearchHit[];
  /** Pass as `cursor` for the next page; absent on the last one. */
  nextCursor?: string;
}

export interface AppendResult {
  threadId: string;
  version: number;
  eventCount: number;
}

/** Per-render overrides of the thread's settings, and format switches. */
export interface RenderOptions {
  contextMode?: ContextMode;
  instructions?: string;
  responsePrefix?: string;
  /** Body escaping of the XML document; attribute values are always fully escaped. */
  escape?: EscapeMode;
  /** Merge adjacent tool calls of one iteration into one AI message. */
  groupToolCalls?: boolean;
  /** Tool calls no result answers: repaired with an error result (default) or dropped. */
  danglingToolCalls?: DanglingToolCalls;
  /**
   * Render within a token budget: the oldest iterations are left out until it fits; the result
   * then also has `dropped` and `tokens`.
   */
  budget?: RenderBudget;
  /**
   * Format `xml` only: answer an `XmlDelta` holding only the lines of events `fromEvent` and
   * later (0 ≤ fromEvent ≤ eventCount, else -32602).
   */
  fromEvent?: number;
  /** How token counts measure media parts (protocol/README.md, "Media in renders"). */
  mediaTokens?: MediaTokenRule;
  /** Which images go with their bytes (protocol/README.md, "Keeping the newest images"). */
  media?: MediaRenderOptions;
}

/** A provider's published rule for the tokens of an image or PDF (`options.mediaTokens`). */
export type MediaTokenRule =
  | "anthropic"
  | "openai-tiles"
  | "openai-patches"
  | "openai-patches-mini"
  | "openai-patches-nano"
  | "gemini"
  | "text";

/**
 * `options.media`: only the `keepImages` newest images (1–10,000) are sent with their bytes, the
 * older ones as their placeholder text; the frontier moves in steps, so a cached prefix breaks
 * at most once per `keepImages + 1` new images.
 */
export interface MediaRenderOptions {
  keepImages: number;
}

/** Options of `thread.renderXml()`. */
export interface XmlRenderOptions extends Omit<RenderOptions, "fromEvent"> {
  /**
   * Ask the server only for the event lines this `Thread` object has not received yet, and
   * assemble the document from the lines it keeps (see `Thread.renderXml`).
   */
  incremental?: boolean;
}

/** Options of `Thread.step`: the render's, `incremental` defaulting to true, and the append's `expectedVersion`. */
export interface StepOptions extends XmlRenderOptions {
  expectedVersion?: number;
}

/** What `Thread.step` answers: the append's result and the XML document after it. */
export interface StepResult {
  appended: AppendResult;
  xml: string;
}

/** What a render with `budget` adds to its result. */
export interface BudgetedRender {
  /** Iterations left out to fit the budget. */
  dropped?: { iterations: number[] };
  /** The render's size in tokens. */
  tokens?: number;
}

export interface XmlRender extends BudgetedRender {
  format: "xml";
  version: number;
  text: string;
}

/**
 * What `thread/render` answers for format `xml` with `options.fromEvent`. The whole document is
 * `"<thread>\n" + (the lines of every event so far) + tail`.
 */
export interface XmlDelta {
  format: "xml";
  version: number;
  eventCount: number;
  fromEvent: number;
  /** The `<event>` lines of events `fromEvent…eventCount-1`, each ending with `\n`. */
  lines: string;
  /** `"</thread>"`, plus `"\n" + responsePrefix` when there is a prefix. */
  tail: string;
}

export interface TextRender extends BudgetedRender {
  format: "text";
  version: number;
  text: string;
}

export interface MessagesRender extends BudgetedRender {
  format: "messages";
  version: number;
  contextMode: ContextMode;
  messages: StoredMessage[];
}

// Provider projections (formats "openai-chat", "openai-responses", "anthropic"): the request
// shapes each provider's API takes, written out here so the package needs neither SDK.

/**
 * `options.reasoning` of the provider renders: `"auto"` (default) gives back the reasoning the
 * provider produced where it requires it; `"none"` leaves all reasoning out.
 */
export type ReasoningReplay = "auto" | "none";

/** Options of the provider renders (`thread.renderOpenAIChat()` and the others). */
export type ProviderRenderOptions = Omit<RenderOptions, "fromEvent"> & {
  reasoning?: ReasoningReplay;
  /** The model the request is for (e.g. `"claude-opus-4-7"`): reasoning of another model family is left out. */
  model?: string;
};

export interface OpenAIChatToolCall {
  id: string;
  type: "function";
  /** `arguments` is the JSON text of the call's arguments. */
  function: { name: string; arguments: string };
}

/** How long OpenAI keeps a cache breakpoint at least (`prompt_cache_options.ttl`, GPT-5.6 and later). */
export type OpenAICacheTtl = "30m";

/**
 * Which breakpoints an OpenAI request writes: `"explicit"` threadkeeper's only (`mode: "explicit"`),
 * `"implicit"` OpenAI's implicit one only (today's messages), `"none"` none: only the key is sent
 * (models before GPT-5.6).
 */
export type OpenAICacheBreakpoints = "explicit" | "implicit" | "none";

/**
 * `options.cacheControl` of the `openai-chat` and `openai-responses` renders: `"none"` (the
 * default) is today's request; `"auto"` adds `prompt_cache_key` (the thread's),
 * `prompt_cache_options: {mode: "implicit"}` and at most 3 explicit breakpoints on system, user
 * and tool content (then text parts); the object form overrides those parts.
 */
export type OpenAICacheControlOption =
  | "none"
  | "auto"
  | { key?: string; breakpoints?: OpenAICacheBreakpoints; ttl?: OpenAICacheTtl };

/** The object forms that mark no block: the messages keep string content. */
export type OpenAIUnmarkedCacheControl = "none" | { key?: string; breakpoints: "implicit" | "none"; ttl?: OpenAICacheTtl };

/** The cache options that mark blocks: system, user and tool content becomes text parts. */
export type OpenAIMarkedCacheControl = "auto" | { key?: string; breakpoints?: "explicit"; ttl?: OpenAICacheTtl };

/** `prompt_cache_breakpoint` on a content part: the prefix up to its end is cached (GPT-5.6 and later). */
export interface OpenAIPromptCacheBreakpoint {
  mode: "explicit";
}

/** `prompt_cache_options` of a request (GPT-5.6 and later). */
export interface OpenAIPromptCacheOptions {
  mode: "implicit" | "explicit";
  ttl?: OpenAICacheTtl;
}

/** A Chat Completions text part, as content is sent under explicit cache breakpoints. */
export interface OpenAIChatTextPart {
  type: "text";
  text: string;
  prompt_cache_breakpoint?: OpenAIPromptCacheBreakpoint;
}

/** Options of the OpenAI renders: the provider render options and prompt caching. */
export interface OpenAIRenderOptions extends ProviderRenderOptions {
  cacheControl?: OpenAICacheControlOption;
}

/**
 * One Chat Completions message. `Content` is `string` for a render without explicit cache
 * breakpoints; with them a non-empty system, user or tool content is text parts.
 */
export type OpenAIChatMessage<Content extends string | OpenAIChatTextPart[] = string> =
  | { role: "system"; content: Content }
  | { role: "user"; content: Content }
  | { role: "assistant"; content: string | null; tool_calls?: OpenAIChatToolCall[] }
  | { role: "tool"; tool_call_id: string; content: Content };

/** The Chat Completions request fields: `openai.chat.completions.create({ model, ...request })`. */
export interface OpenAIChatRequest<Content extends string | OpenAIChatTextPart[] = string> {
  messages: OpenAIChatMessage<Content>[];
  /** With `cacheControl`: the thread's (or the given) cache key. */
  prompt_cache_key?: string;
  /** With `cacheControl`, unless `breakpoints: "none"`. */
  prompt_cache_options?: OpenAIPromptCacheOptions;
}

export interface OpenAIChatRender<Content extends string | OpenAIChatTextPart[] = string>
  extends OpenAIChatRequest<Content>, BudgetedRender {
  format: "openai-chat";
  version: number;
  contextMode: ContextMode;
}

/** A Responses API text part, as content is sent under explicit cache breakpoints. */
export interface OpenAIResponsesTextPart {
  type: "input_text";
  text: string;
  prompt_cache_breakpoint?: OpenAIPromptCacheBreakpoint;
}

/**
 * One Responses API input item. With explicit cache breakpoints (`Content` is then text
 * parts) a non-empty user message's content and tool output are text parts, and the system
 * prompt is the first item (`role: "system"`) instead of `instructions`.
 */
export type OpenAIResponsesInputItem<Content extends string | OpenAIResponsesTextPart[] = string> =
  | { type: "message"; role: "user" | "assistant"; content: string }
  | { type: "message"; role: "system" | "user"; content: Exclude<Content, string> }
  /** `arguments` is the JSON text of the call's arguments. */
  | { type: "function_call"; call_id: string; name: string; arguments: string }
  | { type: "function_call_output"; call_id: string; output: Content }
  /** An imported reasoning block, passed back so the model can continue its reasoning. */
  | { type: "reasoning"; id: string; summary: { type: "summary_text"; text: string }[]; encrypted_content: string };

/** The Responses API request fields: `openai.responses.create({ model, ...request })`. */
export interface OpenAIResponsesRequest<Content extends string | OpenAIResponsesTextPart[] = string> {
  instructions?: string;
  input: OpenAIResponsesInputItem<Content>[];
  /** With `cacheControl`: the thread's (or the given) cache key. */
  prompt_cache_key?: string;
  /** With `cacheControl`, unless `breakpoints: "none"`. */
  prompt_cache_options?: OpenAIPromptCacheOptions;
}

export interface OpenAIResponsesRender<Content extends string | OpenAIResponsesTextPart[] = string>
  extends OpenAIResponsesRequest<Content>, BudgetedRender {
  format: "openai-responses";
  version: number;
  contextMode: ContextMode;
}

/** How long Anthropic keeps a cached prefix: 5 minutes (its default) or an hour. */
export type AnthropicCacheTtl = "5m" | "1h";

/**
 * `options.cacheControl` of the `anthropic` render: `"none"` (the default) marks nothing;
 * `"auto"` marks cache breakpoints as Anthropic's prompt caching reads them (at most 4: the
 * system prompt's last block, the request's last block, and between them so that the next
 * step finds its cached prefix); `{ ttl }` is `"auto"` with that TTL on every breakpoint.
 */
export type AnthropicCacheControlOption = "none" | "auto" | { ttl: AnthropicCacheTtl };

/** A cache breakpoint on an Anthropic block: the prefix up to and including it is cached. */
export interface AnthropicCacheControl {
  type: "ephemeral";
  ttl?: AnthropicCacheTtl;
}

export interface AnthropicTextBlock {
  type: "text";
  text: string;
  cache_control?: AnthropicCacheControl;
}

export type AnthropicContentBlock =
  | AnthropicTextBlock
  /** `id` is the tool call id mapped into `[A-Za-z0-9_-]{1,64}`. */
  | { type: "tool_use"; id: string; name: string; input: Record<string, unknown>; cache_control?: AnthropicCacheControl }
  | { type: "tool_result"; tool_use_id: string; content?: string; is_error: boolean; cache_control?: AnthropicCacheControl }
  /** Anthropic's own reasoning, given back unmodified at the start of its assistant turn. */
  | { type: "thinking"; thinking: string; signature: string; cache_control?: never }
  | { type: "redacted_thinking"; data: string; cache_control?: never };

export interface AnthropicMessage {
  role: "user" | "assistant";
  content: AnthropicContentBlock[];
}

/** The `system` of an Anthropic request: a string, or text blocks (with cache breakpoints). */
export type AnthropicSystem = string | AnthropicTextBlock[];

/**
 * The Messages API request fields: `anthropic.messages.create({ model, max_tokens, ...request })`.
 * `System` is `string` for a render without cache breakpoints and `AnthropicTextBlock[]` for one
 * with them (the system prompt's last block is a breakpoint).
 */
export interface AnthropicRequest<System extends AnthropicSystem = AnthropicSystem> {
  system?: System;
  messages: AnthropicMessage[];
}

/** Options of the `anthropic` render: the provider render options and its cache breakpoints. */
export interface AnthropicRenderOptions extends ProviderRenderOptions {
  cacheControl?: AnthropicCacheControlOption;
}

export interface AnthropicRender<System extends AnthropicSystem = AnthropicSystem> extends AnthropicRequest<System>, BudgetedRender {
  format: "anthropic";
  version: number;
  contextMode: ContextMode;
}

// Gemini `generateContent` (format "gemini"), REST form.

export type GeminiPart =
  | { text: string; thought?: true; thoughtSignature?: string }
  | { functionCall: { id?: string; name: string; args: Record<string, unknown> }; thoughtSignature?: string }
  | { functionResponse: { id?: string; name: string; response: Record<string, unknown> } };

export interface GeminiContent {
  role: "user" | "model";
  parts: GeminiPart[];
}

/** The request fields: `ai.models.generateContent({ model, config: { systemInstruction }, contents })` (REST: `{contents, systemInstruction}`). */
export interface GeminiRequest {
  contents: GeminiContent[];
  systemInstruction?: { parts: { text: string }[] };
}

/** What the first unsigned call of a step in the current turn carries; `"none"` leaves it unsigned. */
export type GeminiThoughtSignaturePlaceholder = "skip_thought_signature_validator" | "context_engineering_is_the_way_to_go" | "none";

export type GeminiRenderOptions = ProviderRenderOptions & { thoughtSignaturePlaceholder?: GeminiThoughtSignaturePlaceholder };

export interface GeminiRender extends GeminiRequest, BudgetedRender {
  format: "gemini";
  version: number;
  contextMode: ContextMode;
}

// Amazon Bedrock Converse (format "bedrock-converse"), JSON wire form.

export interface BedrockCachePoint {
  cachePoint: { type: "default" };
}

export type BedrockContentBlock =
  | { text: string }
  | { toolUse: { toolUseId: string; name: string; input: Record<string, unknown> } }
  | { toolResult: { toolUseId: string; content: ({ text: string } | { json: Record<string, unknown> })[]; status?: "error" } }
  /** `redactedContent` is base64 text (the JSON form of a blob). */
  | { reasoningContent: { reasoningText: { text: string; signature: string } } | { redactedContent: string } }
  | BedrockCachePoint;

export interface BedrockMessage {
  role: "user" | "assistant";
  content: BedrockContentBlock[];
}

/** The request fields: `ConverseCommand({ modelId, ...request })`. */
export interface BedrockConverseRequest {
  messages: BedrockMessage[];
  system?: ({ text: string } | BedrockCachePoint)[];
}

/** `cacheControl: "auto"` puts `cachePoint` blocks where Anthropic's breakpoints would be (at most 4). */
export type BedrockConverseRenderOptions = ProviderRenderOptions & { cacheControl?: "none" | "auto" };

export interface BedrockConverseRender extends BedrockConverseRequest, BudgetedRender {
  format: "bedrock-converse";
  version: number;
  contextMode: ContextMode;
}

export interface EventsPage {
  version: number;
  eventCount: number;
  events: AnyAgentEvent[];
}

export interface SerializeOptions {
  responsePrefix?: string;
  escape?: EscapeMode;
}

export interface ParsedToolCall {
  id: string;
  name: string;
  args: Record<string, unknown>;
}

export interface ParsedToolCalls {
  toolCalls: ParsedToolCall[];
  content: string;
}

// Tokens, compaction, CLI prompts, thread surgery.

export type Tokenizer = "estimate" | "o200k_base" | "cl100k_base";

export interface RenderBudget {
  maxTokens: number;
  /**
   * Where a cut brings the rendering down to (tokens, at most `maxTokens`; default `maxTokens`).
   * Whole oldest iterations are dropped only when the rendering would exceed `maxTokens`, then
   * until it is at most `dropTo`; between cuts the cut stays, so consecutive renders share all
   * but their new end (and a provider's prompt cache keeps reading it).
   */
  dropTo?: number;
  tokenizer?: Tokenizer;
}

/** The render `format` maps to its result type. */
export interface RenderResults {
  xml: XmlRender;
  text: TextRender;
  messages: MessagesRender;
  "openai-chat": OpenAIChatRender;
  "openai-responses": OpenAIResponsesRender;
  anthropic: AnthropicRender;
  gemini: GeminiRender;
  "bedrock-converse": BedrockConverseRender;
}

export interface TokensOptions {
  /** The render whose tokens are counted; default "messages". */
  format?: RenderFormat;
  options?: Omit<RenderOptions, "fromEvent" | "budget">;
  /** Default "estimate". */
  tokenizer?: Tokenizer;
}

export interface TokenCount {
  tokens: number;
  tokenizer: Tokenizer;
  byIteration: { iteration: number; tokens: number }[];
}

/** `thread/view`: the render options whose model input the page shows. */
export type ViewOptions = Omit<RenderOptions, "fromEvent" | "budget">;

/** A thread as one self-contained HTML page (`thread/view`). */
export interface ThreadView {
  html: string;
}

export interface PlanCompactionOptions {
  /** Default 150000. */
  maxContextTokens?: number;
  /** Default 3. */
  keepRecentIterations?: number;
}

export interface CompactionPlan {
  needed: boolean;
  tokens: number;
  /** The iterations to summarize, each with the prompt that asks a model for its summary. */
  iterations: { iteration: number; prompt: string }[];
}

export interface IterationSummary {
  iteration: number;
  summary: string;
}

/**
 * `thread/planCompaction` with `strategy: "rolling"`: rounds that summarize the oldest whole
 * iterations into one summary placed after the instructions (a stable, cacheable prefix), and
 * merge the oldest summaries when they outgrow `summaryTokens`.
 */
export interface RollingCompactionOptions {
  /** A round is needed when the rendering is over this many tokens. */
  maxTokens: number;
  /** A summarize round leaves out the oldest iterations until the rendering is at most this (≤ maxTokens). */
  compactTo: number;
  /** The room all live summaries together may take; default `maxTokens / 4`. */
  summaryTokens?: number;
  /** The rendering measured, as `thread/render` takes it; default "messages". */
  format?: RenderFormat;
  options?: Omit<RenderOptions, "fromEvent" | "budget">;
  /** Default "estimate". */
  tokenizer?: Tokenizer;
}

/** The one summarizer call a rolling plan asks for next. */
export type RollingStep =
  | { kind: "summarize"; iterations: [first: number, last: number]; prompt: string; version: number }
  | { kind: "merge"; rounds: number[]; prompt: string; version: number };

/** A step as `compactRolling` takes it back: the planned one, its `prompt` and `version` optional. */
export type RollingStepInput =
  | { kind: "summarize"; iterations: readonly [number, number]; prompt?: string; version?: number }
  | { kind: "merge"; rounds: readonly number[]; prompt?: string; version?: number };

export interface RollingCompactionPlan {
  strategy: "rolling";
  needed: boolean;
  /** The tokens of the rendering measured. */
  tokens: number;
  /** The version planned on; the round expects it. */
  version: number;
  /** What the live summaries' texts take together. */
  summaryTokens: number;
  /** Present when `needed`, unless nothing is left to compact. */
  step?: RollingStep;
}

export interface RollingCompactResult extends AppendResult {
  /** The round's number in the thread. */
  round: number;
}

/** A tool a CLI model is told about. */
export interface ToolSpec {
  name: string;
  description: string;
  /** JSON Schema of the arguments. */
  parameters: Record<string, unknown>;
}

export interface PromptCliOptions {
  tools?: ToolSpec[];
  inputEncoding?: "xml" | "text";
  /** The render options of the thread's messages (`thread.promptCli` only). */
  options?: ProviderRenderOptions;
}

export interface ParsedReply {
  content: string;
  toolCalls: ParsedToolCall[];
  /** The reply as events, ready for `thread.append`. */
  events: AnyAgentEvent[];
}

export interface PopResult {
  /** The removed events, in thread order. */
  events: AnyAgentEvent[];
  version: number;
}

/** Where `thread.fork()` cuts: at a version, or after a number of events (not both). */
export type ForkOptions = (
  | { atVersion?: number; atEvent?: undefined }
  | { atEvent?: number; atVersion?: undefined }
) & {
  newThreadId?: string;
  metadata?: Record<string, unknown>;
};

// Turns (geppetto turn documents).

export type BlockKind = "user" | "llm_text" | "tool_call" | "tool_use" | "system" | "reasoning" | "other";

export interface Block {
  id?: string;
  turn_id?: string;
  kind: BlockKind;
  role?: "user" | "assistant" | "system" | string;
  payload?: Record<string, unknown>;
  metadata?: Record<string, unknown>;
}

export interface Turn {
  version?: number;
  id?: string;
  run_id?: string;
  blocks: Block[];
  metadata?: Record<string, unknown>;
  data?: Record<string, unknown>;
}

export type TurnFormat = "yaml" | "json";

/** Agent hosts' session files `importThread` also reads: a Claude Code session, a Codex rollout (JSON Lines). */
export type HostSessionFormat = "claude-code" | "codex";

export interface TurnWriteOptions {
  redactEncryptedContent?: boolean;
  omitData?: boolean;
}

export interface TurnRead {
  turn: Turn;
  warnings: string[];
}

export interface TurnProblem {
  path: string;
  message: string;
}

export interface TurnValidation {
  valid: boolean;
  problems: TurnProblem[];
}

// Lifecycle.

export interface ServerInfo {
  name: string;
  version: string;
}

export interface ServerCapabilities {
  renderFormats: string[];
  store: { kind: "memory" | "sqlite" | "postgres" | string };
  /** Present when the server exports its threads as OpenTelemetry traces (`serve --otlp-endpoint`). */
  tracing?: { exporter: "otlp"; protocol: "http/protobuf"; captureContent: boolean };
  [extra: string]: unknown;
}

export interface InitializeResult {
  serverInfo: ServerInfo;
  protocolVersion: number;
  capabilities: ServerCapabilities;
}
