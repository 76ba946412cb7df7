import type { BaseMessage } from "@langchain/core/messages";
import type { CallOptions } from "./connection.js";
import { ErrorCodes, ThreadKeeperError } from "./errors.js";
import { storedToLangChainMessages } from "./langchain.js";
import { encodeEvents } from "./parts.js";
import type { ThreadClient } from "./thread-client.js";
import type {
  AgentEventInput,
  AnthropicCacheTtl,
  AnthropicRender,
  AnthropicRenderOptions,
  AnthropicRequest,
  BedrockConverseRender,
  BedrockConverseRenderOptions,
  BedrockConverseRequest,
  GeminiRender,
  GeminiRenderOptions,
  GeminiRequest,
  AnthropicTextBlock,
  AnyAgentEvent,
  AppendResult,
  CompactionPlan,
  EscapeMode,
  EventsPage,
  ForkOptions,
  IterationSummary,
  MessagesRender,
  OpenAIChatRender,
  OpenAIChatRequest,
  OpenAIChatTextPart,
  OpenAIMarkedCacheControl,
  OpenAIPromptCacheOptions,
  OpenAIRenderOptions,
  OpenAIResponsesRender,
  OpenAIResponsesRequest,
  OpenAIResponsesTextPart,
  OpenAIUnmarkedCacheControl,
  PlanCompactionOptions,
  PopResult,
  PromptCliOptions,
  ProviderRenderOptions,
  RenderFormat,
  RenderOptions,
  RollingCompactionOptions,
  RollingCompactionPlan,
  RollingCompactResult,
  RollingStepInput,
  StepOptions,
  StepResult,
  StoredMessage,
  TextRender,
  ThreadInfo,
  TokenCount,
  TokensOptions,
  ThreadView,
  ViewOptions,
  TurnFormat,
  TurnWriteOptions,
  XmlDelta,
  XmlRender,
  XmlRenderOptions,
} from "./types.js";

/** The event lines of the document received so far in one escape mode. */
interface KeptLines {
  lines: string;
  eventCount: number;
  /** The thread version they were rendered at: a thread's version never goes down. */
  version: number;
}

const NOTHING_KEPT: KeptLines = { lines: "", eventCount: 0, version: 0 };

/** Splits the call options off an options object. */
function splitCallOptions<T extends CallOptions>(options: T): [Omit<T, keyof CallOptions>, CallOptions] {
  const { signal, timeoutMs, ...rest } = options;
  return [rest, { signal, timeoutMs }];
}

/** `{...params, options}` when there are options, else `params`: the server's own defaults apply. */
/** `request` with the prompt-cache fields a render carried (none without `cacheControl`). */
function withCacheFields<T extends object>(
  request: T,
  key: string | undefined,
  options: OpenAIPromptCacheOptions | undefined,
): T & { prompt_cache_key?: string; prompt_cache_options?: OpenAIPromptCacheOptions } {
  return {
    ...request,
    ...(key === undefined ? {} : { prompt_cache_key: key }),
    ...(options === undefined ? {} : { prompt_cache_options: options }),
  };
}

function withOptions(params: object, options: object): object {
  return Object.keys(options).length > 0 ? { ...params, options } : params;
}

/** Event selection of `thread.events()`: a page (`offset`, `limit`) or the last `tail` events. */
export type EventsOptions = ({ offset?: number; limit?: number; tail?: undefined } | { tail: number; offset?: undefined; limit?: number }) & CallOptions;

/** -32602 about `options.fromEvent`: the thread has fewer events than the lines kept. */
function isFromEventRefused(error: unknown): boolean {
  return (
    error instanceof ThreadKeeperError &&
    error.code === ErrorCodes.InvalidParams &&
    (error.data as { path?: unknown } | undefined)?.path === "options.fromEvent"
  );
}

/**
 * One thread on the server. Obtained from `client.openThread()` or `client.importThread()`;
 * `Client` is the type of the client it came from (`ThreadKeeper` for those).
 */
export class Thread<Client extends ThreadClient = ThreadClient> {
  readonly id: string;
  /** The thread as it was when opened; `version` and `eventCount` follow this handle's appends. */
  info: ThreadInfo;

  /** Lines kept by incremental XML renders, per escape mode (they differ in body escaping). */
  private readonly xmlLines = new Map<EscapeMode, KeptLines>();
  /** Incremental renders run one after the other, so each extends the lines the last one left. */
  private xmlQueue: Promise<unknown> = Promise.resolve();
  /** Incremental renders queued or in flight: with none, the next one is sent at once. */
  private xmlRendersWaiting = 0;
  /** Bumped when the kept lines are dropped, so a render already in flight does not keep its lines. */
  private xmlGeneration = 0;

  constructor(
    /** The client this thread's requests go through. */
    readonly client: Client,
    info: ThreadInfo,
  ) {
    this.id = info.threadId;
    this.info = info;
  }

  /**
   * Appends events, all or none. With `expectedVersion`, fails with -32003 unless the thread is at it.
   * A media part may give its bytes as `data` (`imagePart(bytes)`): they are sent base64-encoded,
   * and the server keeps them as a blob, the part then naming it by `blob`.
   */
  async append(events: readonly AgentEventInput[], options: { expectedVersion?: number } & CallOptions = {}): Promise<AppendResult> {
    const [rest, call] = splitCallOptions(options);
    const result = await this.client.call<AppendResult>("thread/append", { threadId: this.id, events: encodeEvents(events), ...rest }, call);
    this.info = { ...this.info, version: result.version, eventCount: result.eventCount };
    return result;
  }

  async render(format: "xml", options: RenderOptions & { fromEvent: number } & CallOptions): Promise<XmlDelta>;
  async render(format: "xml", options?: Omit<RenderOptions, "fromEvent"> & CallOptions): Promise<XmlRender>;
  async render(format: "xml", options?: RenderOptions & CallOptions): Promise<XmlRender | XmlDelta>;
  async render(format: "text", options?: RenderOptions & CallOptions): Promise<TextRender>;
  async render(format: "messages", options?: RenderOptions & CallOptions): Promise<MessagesRender>;
  async render(format: "openai-chat", options?: ProviderRenderOptions & { cacheControl?: OpenAIUnmarkedCacheControl } & CallOptions): Promise<OpenAIChatRender>;
  async render(format: "openai-chat", options: ProviderRenderOptions & { cacheControl: OpenAIMarkedCacheControl } & CallOptions): Promise<OpenAIChatRender<string | OpenAIChatTextPart[]>>;
  async render(format: "openai-chat", options?: OpenAIRenderOptions & CallOptions): Promise<OpenAIChatRender<string | OpenAIChatTextPart[]>>;
  async render(format: "openai-responses", options?: ProviderRenderOptions & { cacheControl?: OpenAIUnmarkedCacheControl } & CallOptions): Promise<OpenAIResponsesRender>;
  async render(format: "openai-responses", options: ProviderRenderOptions & { cacheControl: OpenAIMarkedCacheControl } & CallOptions): Promise<OpenAIResponsesRender<string | OpenAIResponsesTextPart[]>>;
  async render(format: "openai-responses", options?: OpenAIRenderOptions & CallOptions): Promise<OpenAIResponsesRender<string | OpenAIResponsesTextPart[]>>;
  async render(format: "anthropic", options?: AnthropicRenderOptions & { cacheControl?: "none" } & CallOptions): Promise<AnthropicRender<string>>;
  async render(format: "anthropic", options: AnthropicRenderOptions & { cacheControl: "auto" | { ttl: AnthropicCacheTtl } } & CallOptions): Promise<AnthropicRender<AnthropicTextBlock[]>>;
  async render(format: "anthropic", options?: AnthropicRenderOptions & CallOptions): Promise<AnthropicRender>;
  async render(format: "gemini", options?: GeminiRenderOptions & CallOptions): Promise<GeminiRender>;
  async render(format: "bedrock-converse", options?: BedrockConverseRenderOptions & CallOptions): Promise<BedrockConverseRender>;
  async render(
    format: RenderFormat,
    options: RenderOptions & CallOptions = {},
  ): Promise<
    | XmlRender
    | XmlDelta
    | TextRender
    | MessagesRender
    | OpenAIChatRender<string | OpenAIChatTextPart[]>
    | OpenAIResponsesRender<string | OpenAIResponsesTextPart[]>
    | AnthropicRender
    | GeminiRender
    | BedrockConverseRender
  > {
    const [renderOptions, call] = splitCallOptions(options);
    return this.client.call("thread/render", withOptions({ threadId: this.id, format }, renderOptions), call);
  }

  /**
   * The `<thread>` XML document, with the response prefix (option, else setting) appended.
   *
   * With `incremental: true` the server sends only the event lines this object has not received
   * yet (an XML delta); the object keeps the lines, per escape mode, and assembles the document,
   * so a step costs what was appended instead of the whole document. This assumes the thread is
   * not deleted and recreated under the same id while this object is used (event lines never
   * change otherwise: threads are append-only). When the server refuses the delta because the
   * thread now has fewer events than kept, or reports a lower version than the kept lines were
   * rendered at, the object drops what it kept and renders from the first event again.
   */
  async renderXml(options: XmlRenderOptions & CallOptions = {}): Promise<string> {
    const { incremental, ...renderOptions } = options;
    if (incremental) return this.queueIncremental(renderOptions);
    return (await this.render("xml", renderOptions)).text;
  }

  /**
   * One agent-loop step: appends `events` and renders the XML document after them, both
   * requests sent in one write (`thread/append`, then `thread/render`), so the step costs one
   * round trip. The server answers a thread's requests in arrival order, so the document holds
   * the events. The render is incremental unless `incremental: false`. When the append fails
   * the step rejects with its error (the render still runs, and its lines are kept).
   */
  async step(events: readonly AgentEventInput[], options: StepOptions & CallOptions = {}): Promise<StepResult> {
    const { expectedVersion, incremental = true, ...renderOptions } = options;
    const call = { signal: options.signal, timeoutMs: options.timeoutMs };
    const appended = this.append(events, { expectedVersion, ...call });
    const rendered = this.renderXml({ ...renderOptions, incremental });
    // A failed append is the error to report; the render's own failure then goes unheard.
    rendered.catch(() => {});
    return { appended: await appended, xml: await rendered };
  }

  /**
   * The XML delta from event `fromEvent` on: `{version, eventCount, fromEvent, lines, tail}`;
   * the document is `"<thread>\n" + (the lines of every event so far) + tail`.
   */
  async renderXmlDelta(fromEvent: number, options: Omit<RenderOptions, "fromEvent"> & CallOptions = {}): Promise<XmlDelta> {
    return this.render("xml", { ...options, fromEvent });
  }

  private queueIncremental(options: Omit<RenderOptions, "fromEvent"> & CallOptions): Promise<string> {
    // With nothing ahead, the request is written in this tick, together with an append issued
    // just before it (one write, one round trip), instead of a microtask later.
    const run = this.xmlRendersWaiting === 0 ? this.renderIncremental(options) : this.xmlQueue.then(() => this.renderIncremental(options));
    this.xmlRendersWaiting++;
    const settled = run.then(
      () => void this.xmlRendersWaiting--,
      () => void this.xmlRendersWaiting--,
    );
    this.xmlQueue = settled;
    return run;
  }

  private async renderIncremental(options: Omit<RenderOptions, "fromEvent"> & CallOptions): Promise<string> {
    const escape = options.escape ?? "full";
    const kept = this.xmlLines.get(escape) ?? NOTHING_KEPT;
    const generation = this.xmlGeneration;
    let delta: XmlDelta;
    try {
      delta = await this.renderXmlDelta(kept.eventCount, options);
    } catch (error) {
      if (kept.eventCount === 0 || !isFromEventRefused(error)) throw error;
      this.forgetXmlLines();
      return this.renderIncremental(options);
    }
    if (delta.version < kept.version) {
      this.forgetXmlLines();
      return this.renderIncremental(options);
    }
    const lines = kept.lines + delta.lines;
    if (generation === this.xmlGeneration) this.xmlLines.set(escape, { lines, eventCount: delta.eventCount, version: delta.version });
    return `<thread>\n${lines}${delta.tail}`;
  }

  private forgetXmlLines(): void {
    this.xmlLines.clear();
    this.xmlGeneration++;
  }

  /** LangChain stored messages (standard or XML context mode). */
  async renderMessages(options?: RenderOptions & CallOptions): Promise<StoredMessage[]> {
    return (await this.render("messages", options)).messages;
  }

  /** The messages as one prompt text (`[User]\n…` blocks). */
  async renderText(options?: RenderOptions & CallOptions): Promise<string> {
    return (await this.render("text", options)).text;
  }

  /**
   * The thread as OpenAI Chat Completions `{messages}`: every assistant tool call is answered by
   * its tool message right after it. `openai.chat.completions.create({ model, ...request })`.
   */
  async renderOpenAIChat(options?: ProviderRenderOptions & { cacheControl?: OpenAIUnmarkedCacheControl } & CallOptions): Promise<OpenAIChatRequest>;
  async renderOpenAIChat(options: ProviderRenderOptions & { cacheControl: OpenAIMarkedCacheControl } & CallOptions): Promise<OpenAIChatRequest<string | OpenAIChatTextPart[]>>;
  async renderOpenAIChat(options?: OpenAIRenderOptions & CallOptions): Promise<OpenAIChatRequest<string | OpenAIChatTextPart[]>>;
  async renderOpenAIChat(options?: OpenAIRenderOptions & CallOptions): Promise<OpenAIChatRequest<string | OpenAIChatTextPart[]>> {
    const { messages, prompt_cache_key, prompt_cache_options } = await this.render("openai-chat", options);
    return withCacheFields({ messages }, prompt_cache_key, prompt_cache_options);
  }

  /**
   * The thread as OpenAI Responses API `{instructions?, input}`: `openai.responses.create({ model, ...request })`.
   * With `cacheControl` it also has `prompt_cache_key` (and `prompt_cache_options`); with
   * explicit breakpoints the system prompt is the first input item instead of `instructions`.
   */
  async renderOpenAIResponses(options?: ProviderRenderOptions & { cacheControl?: OpenAIUnmarkedCacheControl } & CallOptions): Promise<OpenAIResponsesRequest>;
  async renderOpenAIResponses(options: ProviderRenderOptions & { cacheControl: OpenAIMarkedCacheControl } & CallOptions): Promise<OpenAIResponsesRequest<string | OpenAIResponsesTextPart[]>>;
  async renderOpenAIResponses(options?: OpenAIRenderOptions & CallOptions): Promise<OpenAIResponsesRequest<string | OpenAIResponsesTextPart[]>>;
  async renderOpenAIResponses(options?: OpenAIRenderOptions & CallOptions): Promise<OpenAIResponsesRequest<string | OpenAIResponsesTextPart[]>> {
    const { instructions, input, prompt_cache_key, prompt_cache_options } = await this.render("openai-responses", options);
    const request = instructions === undefined ? { input } : { instructions, input };
    return withCacheFields(request, prompt_cache_key, prompt_cache_options);
  }

  /**
   * The thread as Anthropic Messages API `{system?, messages}`: `anthropic.messages.create({ model, max_tokens, ...request })`.
   * With `cacheControl: "auto"` (or `{ ttl }`) the request carries prompt-cache breakpoints and
   * `system` is text blocks.
   */
  async renderAnthropic(options?: AnthropicRenderOptions & { cacheControl?: "none" } & CallOptions): Promise<AnthropicRequest<string>>;
  async renderAnthropic(options: AnthropicRenderOptions & { cacheControl: "auto" | { ttl: AnthropicCacheTtl } } & CallOptions): Promise<AnthropicRequest<AnthropicTextBlock[]>>;
  async renderAnthropic(options?: AnthropicRenderOptions & CallOptions): Promise<AnthropicRequest>;
  async renderAnthropic(options?: AnthropicRenderOptions & CallOptions): Promise<AnthropicRequest> {
    const { system, messages } = await this.render("anthropic", options);
    return system === undefined ? { messages } : { system, messages };
  }

  /**
   * The thread as a Gemini `generateContent` body `{contents, systemInstruction?}` (REST form).
   * Google's thought parts and signatures go back where they came; the first unsigned call of
   * each step in the current turn gets `thoughtSignaturePlaceholder`.
   */
  async renderGemini(options?: GeminiRenderOptions & CallOptions): Promise<GeminiRequest> {
    const { contents, systemInstruction } = await this.render("gemini", options);
    return systemInstruction === undefined ? { contents } : { contents, systemInstruction };
  }

  /**
   * The thread as Amazon Bedrock Converse `{messages, system?}`: `new ConverseCommand({ modelId, ...request })`.
   * With `cacheControl: "auto"` it carries `cachePoint` blocks.
   */
  async renderBedrockConverse(options?: BedrockConverseRenderOptions & CallOptions): Promise<BedrockConverseRequest> {
    const { messages, system } = await this.render("bedrock-converse", options);
    return system === undefined ? { messages } : { system, messages };
  }

  /**
   * Appends messages as events (`messages/toEvents`, then `thread/append`): stored messages or
   * LangChain message objects, each event at `iteration` (default 0).
   */
  async appendMessages(
    messages: readonly (StoredMessage | BaseMessage)[],
    options: { iteration?: number; timestamp?: number; expectedVersion?: number } & CallOptions = {},
  ): Promise<AppendResult> {
    const { expectedVersion, signal, timeoutMs, ...stamp } = options;
    const events = await this.client.messagesToEvents(messages, { ...stamp, signal, timeoutMs });
    return this.append(events, { expectedVersion, signal, timeoutMs });
  }

  /**
   * Empties the thread, keeping its id, settings and metadata: deletes it and opens it again
   * (two requests: another client may see it missing in between).
   */
  async clear(options: CallOptions = {}): Promise<void> {
    await this.delete(options);
    const { settings, metadata } = this.info;
    this.info = await this.client.call<ThreadInfo>("thread/open", { threadId: this.id, settings, metadata }, options);
  }

  /** The stored events, exactly as appended: a page (`offset`, `limit`), or the last `tail`. */
  async events(options: EventsOptions = {}): Promise<AnyAgentEvent[]> {
    return (await this.eventsPage(options)).events;
  }

  async eventsPage(options: EventsOptions = {}): Promise<EventsPage> {
    const [selection, call] = splitCallOptions(options);
    return this.client.call<EventsPage>("thread/events", { threadId: this.id, ...selection }, call);
  }

  /** The thread as a turn document. */
  async export(format: TurnFormat, options: TurnWriteOptions & CallOptions = {}): Promise<string> {
    const [write, call] = splitCallOptions(options);
    return (await this.client.call<{ text: string }>("thread/export", withOptions({ threadId: this.id, format }, write), call)).text;
  }

  /** The size of a render in tokens, per iteration too (`thread/tokens`). */
  async tokens(options: TokensOptions & CallOptions = {}): Promise<TokenCount> {
    const [params, call] = splitCallOptions(options);
    return this.client.call<TokenCount>("thread/tokens", { threadId: this.id, ...params }, call);
  }

  /** The thread as one self-contained HTML page for a person to read (`thread/view`). */
  async view(options: ViewOptions & CallOptions = {}): Promise<string> {
    const [viewOptions, call] = splitCallOptions(options);
    const params = Object.keys(viewOptions).length ? { threadId: this.id, options: viewOptions } : { threadId: this.id };
    return (await this.client.call<ThreadView>("thread/view", params, call)).html;
  }

  /** Whether the thread needs compacting, and the summary prompts of the iterations to compact. */
  async planCompaction(options: PlanCompactionOptions & CallOptions = {}): Promise<CompactionPlan> {
    const [params, call] = splitCallOptions(options);
    return this.client.call<CompactionPlan>("thread/planCompaction", { threadId: this.id, ...params }, call);
  }

  /**
   * What the next rolling-compaction round should be (`thread/planCompaction`, strategy
   * "rolling"): when `needed`, call a model with `step.prompt` and pass its reply to
   * `compactRolling(step, reply)`; then plan again.
   */
  async planRollingCompaction(options: RollingCompactionOptions & CallOptions): Promise<RollingCompactionPlan> {
    const [params, call] = splitCallOptions(options);
    return this.client.call<RollingCompactionPlan>(
      "thread/planCompaction",
      { threadId: this.id, strategy: "rolling", ...params },
      call,
    );
  }

  /** Records a rolling round: `summary` of what the planned `step` covers (`thread/compact`, strategy "rolling"). */
  async compactRolling(
    step: RollingStepInput,
    summary: string,
    options: { expectedVersion?: number } & CallOptions = {},
  ): Promise<RollingCompactResult> {
    const [params, call] = splitCallOptions(options);
    const result = await this.client.call<RollingCompactResult>(
      "thread/compact",
      { threadId: this.id, strategy: "rolling", step, summary, ...params },
      call,
    );
    this.forgetXmlLines();
    this.info = { ...this.info, version: result.version, eventCount: result.eventCount };
    return result;
  }

  /** Replaces iterations by their summaries (`thread/compact`); answers as `append` does. */
  async compact(
    summaries: readonly IterationSummary[],
    options: { expectedVersion?: number; keepRecentIterations?: number } & CallOptions = {},
  ): Promise<AppendResult> {
    const [params, call] = splitCallOptions(options);
    const result = await this.client.call<AppendResult>("thread/compact", { threadId: this.id, summaries, ...params }, call);
    this.forgetXmlLines();
    this.info = { ...this.info, version: result.version, eventCount: result.eventCount };
    return result;
  }

  /** The thread as a CLI model's prompt (`prompt/cli`). */
  async promptCli(options: PromptCliOptions & CallOptions = {}): Promise<string> {
    const [params, call] = splitCallOptions(options);
    return (await this.client.call<{ prompt: string }>("prompt/cli", { threadId: this.id, ...params }, call)).prompt;
  }

  /** Removes the last `count` events (default 1) and answers them, in thread order (`thread/pop`). */
  async pop(options: { count?: number; expectedVersion?: number } & CallOptions = {}): Promise<PopResult> {
    const [params, call] = splitCallOptions(options);
    const result = await this.client.call<PopResult>("thread/pop", { threadId: this.id, ...params }, call);
    this.forgetXmlLines();
    this.info = { ...this.info, version: result.version, eventCount: this.info.eventCount - result.events.length };
    return result;
  }

  /** A new thread holding this one's events up to `atVersion` or `atEvent` (default: all). */
  async fork(options: ForkOptions & CallOptions = {}): Promise<Thread<Client>> {
    const [params, call] = splitCallOptions(options);
    const info = await this.client.call<ThreadInfo>("thread/fork", { threadId: this.id, ...params }, call);
    return new Thread(this.client, info);
  }

  /** Frees the server's in-memory state; a durable store keeps the thread, the memory store drops it. */
  async close(options: CallOptions = {}): Promise<void> {
    this.forgetXmlLines();
    await this.client.call("thread/close", { threadId: this.id }, options);
  }

  /** Deletes the thread; `false` when it was already gone. */
  async delete(options: CallOptions = {}): Promise<boolean> {
    this.forgetXmlLines();
    return this.client.deleteThread(this.id, options);
  }

  /** The rendered messages as LangChain `BaseMessage`s (needs `@langchain/core`). */
  async toLangChainMessages(options?: RenderOptions & CallOptions): Promise<BaseMessage[]> {
    return storedToLangChainMessages(await this.renderMessages(options));
  }
}
