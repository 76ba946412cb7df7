/**
 * Code a user writes, which must compile under `strict`: a check of an event's `type` narrows it
 * to that event's interface with no guard (the events of types this version does not know stay
 * in the other branches), and the render options with their typed results. Type-checked (never
 * run) by `npm run typecheck`; the mistakes of the same code are in `mistakes.ts`.
 */
import {
  audioPart,
  filePart,
  imagePart,
  isKnownEvent,
  textOf,
  isUnknownEvent,
  type AgentEvent,
  type BlobId,
  type BlobInfo,
  type ContentPart,
  type AnthropicCacheControlOption,
  type AnthropicRequest,
  type OpenAICacheControlOption,
  type OpenAIChatRequest,
  type OpenAIChatTextPart,
  type OpenAIResponsesTextPart,
  type AnyAgentEvent,
  type MessageEvent,
  type Thread,
  type ThreadKeeper,
  type ToolCallEvent,
  type UnknownAgentEvent,
} from "../../src/index.js";

export async function narrowing(tk: ThreadKeeper, thread: Thread): Promise<string[]> {
  const seen: string[] = [];
  for (const e of await thread.events()) {
    if (e.type === "tool_call") {
      const call: ToolCallEvent = e; // the branch holds the tool call alone
      seen.push(e.toolName, e.toolCallId, call.toolName, JSON.stringify(e.args));
    } else if (e.type === "message") {
      const role: "user" | "assistant" | "system" = e.role;
      seen.push(role, textOf(e.content)); // a string, or the text of its parts
    } else {
      seen.push(e.type); // every event's type is a string, an unknown one's too
    }
    if (e.type !== "tool_result") seen.push(String(e.iteration));
    else seen.push(e.toolCallId);
  }

  // A switch over every known type leaves the unknown form in `default`.
  for (const e of (await thread.eventsPage({ tail: 10 })).events) {
    switch (e.type) {
      case "message":
      case "tool_call":
      case "tool_result":
      case "error":
      case "human_input_requested":
      case "human_input_received":
      case "completion":
      case "summary":
      case "reasoning":
        seen.push(e.type);
        break;
      default: {
        const unknown: UnknownAgentEvent = e;
        seen.push(unknown.type, String(unknown["decision"]));
        if ((e.type as string) === "approval") seen.push("approved");
      }
    }
  }

  // The guards narrow both ways, and what a thread answers elsewhere narrows the same.
  const popped = (await thread.pop()).events;
  const known: AgentEvent[] = popped.filter(isKnownEvent);
  const unknown: UnknownAgentEvent[] = popped.filter(isUnknownEvent);
  const parsed: AnyAgentEvent[] = await tk.parseThreadXml("<thread>\n</thread>");
  const firstMessage: MessageEvent | undefined = parsed.find((e) => e.type === "message"); // an inferred type guard
  for (const e of (await tk.parseReply("Done.", 1)).events) if (e.type === "completion") seen.push(String(e.verified));
  seen.push(String(known.length + unknown.length), textOf(firstMessage?.content ?? ""));

  // A thread opened on a ThreadKeeper keeps the client's whole type.
  const opened = await tk.openThread({ threadId: "t" });
  seen.push(...(await opened.client.listThreads()).map((info) => info.threadId));
  const forked: Thread<ThreadKeeper> = await opened.fork();
  seen.push(forked.id);
  return seen;
}

export async function promptCaching(thread: Thread, ttl: "5m" | "1h" | undefined): Promise<AnthropicRequest> {
  const cacheControl: AnthropicCacheControlOption = ttl === undefined ? "auto" : { ttl };
  const request = await thread.renderAnthropic({ cacheControl, budget: { maxTokens: 30_000, dropTo: 18_000 } });
  const system = typeof request.system === "string" ? request.system : request.system?.map((block) => block.text).join("");
  for (const block of request.messages.flatMap((message) => message.content)) {
    if (block.cache_control !== undefined) console.log(block.type, block.cache_control.type, block.cache_control.ttl ?? "5m");
  }
  const plain = await thread.render("anthropic", { cacheControl: "none" });
  // Without breakpoints the system prompt is a string; with them, text blocks.
  const instructions: string | undefined = (await thread.renderAnthropic()).system?.trim() ?? plain.system;
  const blocks = (await thread.renderAnthropic({ cacheControl: { ttl: "1h" } })).system;
  console.log(instructions, blocks?.at(-1)?.cache_control?.ttl);
  const fitted = await thread.render("openai-chat", { budget: { maxTokens: 30_000, dropTo: 18_000, tokenizer: "o200k_base" } });
  console.log(system, plain.messages.length, fitted.dropped?.iterations);
  return request;
}

export async function openAIPromptCaching(thread: Thread, key: string | undefined): Promise<OpenAIChatRequest<string | OpenAIChatTextPart[]>> {
  const cacheControl: OpenAICacheControlOption = key === undefined ? "auto" : { key, ttl: "30m" };
  const request = await thread.renderOpenAIChat({ cacheControl, budget: { maxTokens: 30_000, dropTo: 18_000 } });
  for (const message of request.messages) {
    if (message.role === "assistant" || typeof message.content === "string") continue;
    const marked: OpenAIChatTextPart[] = message.content.filter((part) => part.prompt_cache_breakpoint?.mode === "explicit");
    console.log(message.role, marked.length);
  }
  console.log(request.prompt_cache_key, request.prompt_cache_options?.mode);
  // Without explicit breakpoints the content stays a string.
  const implicit = await thread.renderOpenAIChat({ cacheControl: { breakpoints: "implicit" } });
  console.log(implicit.messages[0]?.content?.trim(), implicit.prompt_cache_key);
  const responses = await thread.renderOpenAIResponses({ cacheControl: "auto", contextMode: "xml" });
  for (const item of responses.input) {
    if (item.type === "message" && typeof item.content !== "string") {
      const parts: OpenAIResponsesTextPart[] = item.content;
      console.log(item.role, parts.map((part) => part.text).join(""));
    }
  }
  const plain = await thread.renderOpenAIResponses();
  console.log(plain.instructions?.trim());
  return request;
}

export async function media(tk: ThreadKeeper, thread: Thread, png: Uint8Array, pdf: Buffer, wav: Uint8Array): Promise<BlobId[]> {
  // Parts carry bytes (a Uint8Array or Buffer); the client sends them base64-encoded.
  await thread.append([
    { type: "message", role: "user", iteration: 0, content: [{ type: "text", text: "What is in these?" }, imagePart(png, { detail: "high" }), filePart(pdf, { mediaType: "application/pdf", filename: "report.pdf" })] },
    { type: "tool_call", toolName: "screenshot", toolCallId: "c1", args: {}, iteration: 0 },
    { type: "tool_result", toolCallId: "c1", iteration: 0, content: [imagePart(png)] },
    { type: "tool_result", toolCallId: "c2", iteration: 0, result: { ok: true }, content: [audioPart(wav, { mediaType: "audio/wav" })] },
    { type: "message", role: "user", iteration: 1, content: [{ type: "image", url: "https://example.com/a.png", detail: "low" }] },
  ]);
  // A blob put first is named by its id.
  const put: BlobInfo = await tk.putBlob(png);
  await thread.append([{ type: "message", role: "user", iteration: 1, content: [{ type: "image", blob: put.blob, mediaType: put.mediaType }] }]);
  // Read back, a media part names its blob (or URL); the blob's bytes come from getBlob.
  const blobs: BlobId[] = [];
  for (const e of await thread.events()) {
    const parts: ContentPart[] = e.type === "message" && typeof e.content !== "string" ? e.content : e.type === "tool_result" ? (e.content ?? []) : [];
    for (const part of parts) {
      if (part.type === "text") continue;
      if (part.blob !== undefined) blobs.push(part.blob);
      if (part.type === "image" && part.blob !== undefined) console.log(part.width, part.height, part.size, part.detail);
      if (part.type === "file") console.log(part.filename, part.mediaType);
    }
  }
  const first = blobs[0];
  if (first !== undefined) {
    const { data, mediaType, size } = await tk.getBlob(first);
    const bytes: Uint8Array = data;
    console.log(bytes.byteLength === size, mediaType, (await tk.statBlob(first)).width);
  }
  return blobs;
}
