/**
 * The Vercel AI SDK form of a thread (`threadkeeper/ai-sdk`): `ModelMessage[]`, what
 * `generateText` and `streamText` take as `messages` and give back as `responseMessages`.
 * A separate entry point so the main one needs no `ai` (an optional peer dependency).
 *
 * The server does both directions: the "ai-sdk" render projects the thread (repaired as in
 * standard mode, so every call is answered right after it), and `aiSdk/toEvents` turns the
 * SDK's messages into events that keep what events have no field for, so the messages read
 * back equal.
 *
 * AI SDK 7 refuses system messages in `messages` unless `allowSystemInMessages` is set, so the
 * thread's system text (instructions and summaries) comes apart, as `instructions`:
 *
 * ```ts
 * const result = await generateText({ model, tools, ...(await toPrompt(thread)) });
 * await appendModelMessages(thread, result.responseMessages);
 * ```
 */
import type { ModelMessage } from "ai";
import type { CallOptions } from "./client.js";
import type { Thread } from "./thread.js";
import type { AnyAgentEvent, AppendResult, ProviderRenderOptions } from "./types.js";

/** The `thread/render` result for format "ai-sdk". */
export interface AiSdkRender {
  format: "ai-sdk";
  version: number;
  contextMode: "standard" | "xml";
  /** The system message's text (instructions, summaries), for `generateText`'s `instructions`. */
  instructions?: string;
  messages: ModelMessage[];
}

/** What `generateText` / `streamText` take as the prompt: spread it into their options. */
export interface AiSdkPrompt {
  instructions?: string;
  messages: ModelMessage[];
}

export interface AppendModelMessagesOptions extends CallOptions {
  /** The `iteration` of the appended events. Default 0. */
  iteration?: number;
  /** Fails with -32003 unless the thread is at this version (nothing is appended then). */
  expectedVersion?: number;
}

/** The thread's "ai-sdk" render (standard context mode unless the thread or `options` say otherwise). */
export async function renderAiSdk(thread: Thread, options: ProviderRenderOptions & CallOptions = {}): Promise<AiSdkRender> {
  const { signal, timeoutMs, ...render } = options;
  const params = { threadId: thread.id, format: "ai-sdk", ...(Object.keys(render).length > 0 ? { options: render } : {}) };
  const result = await thread.client.call<AiSdkRender>("thread/render", params, { signal, timeoutMs });
  return { ...result, messages: decodeBinary(result.messages) };
}

/**
 * Where a part holds bytes or a URL that JSON cannot carry as they are (`Uint8Array`,
 * `ArrayBuffer`, `URL`): they go to the server as base64 or the URL's text, the part marked
 * under `providerOptions.threadkeeper.encoded` (which the server keeps with the part), and
 * come back as they were.
 */
const MARK = "threadkeeper";
type Encoded = "bytes" | "url";
type Holder = Record<string, unknown>;

/** The object and key holding a part's bytes or URL: `image`, `data`, or a tagged `data`'s `data` / `url`. */
function payloadSlot(part: Holder): [Holder, string] | undefined {
  const key = part["type"] === "image" ? "image" : part["type"] === "file" ? "data" : undefined;
  if (key === undefined) return undefined;
  const value = part[key];
  if (isPlainObject(value) && (value["type"] === "data" || value["type"] === "url")) {
    return [value, value["type"] === "data" ? "data" : "url"];
  }
  return [part, key];
}

function isPlainObject(value: unknown): value is Holder {
  return typeof value === "object" && value !== null && !(value instanceof Uint8Array) && !(value instanceof ArrayBuffer) && !(value instanceof URL) && !Array.isArray(value);
}

function base64Of(bytes: Uint8Array): string {
  let text = "";
  for (let i = 0; i < bytes.length; i += 0x8000) text += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(text);
}

function bytesOf(base64: string): Uint8Array {
  const text = atob(base64);
  const bytes = new Uint8Array(text.length);
  for (let i = 0; i < text.length; i++) bytes[i] = text.charCodeAt(i);
  return bytes;
}

/** The parts of a message that may hold media: user content, and tool results' content outputs. */
function mediaParts(message: ModelMessage, each: (part: Holder) => Holder): ModelMessage {
  if (typeof message.content === "string") return message;
  if (message.role === "user") {
    return { ...message, content: message.content.map((part) => each(part as unknown as Holder) as unknown as typeof part) };
  }
  if (message.role === "tool") {
    const content = message.content.map((part) => {
      if (part.type !== "tool-result" || part.output.type !== "content") return part;
      const value = part.output.value.map((item) => each(item as unknown as Holder) as unknown as typeof item);
      return { ...part, output: { ...part.output, value } };
    });
    return { ...message, content } as ModelMessage;
  }
  return message;
}

function encodePart(part: Holder): Holder {
  const slot = payloadSlot(part);
  if (slot === undefined) return part;
  const [holder, key] = slot;
  const value = holder[key];
  let encoded: Encoded;
  let text: string;
  if (value instanceof URL) {
    [encoded, text] = ["url", value.href];
  } else if (value instanceof Uint8Array || value instanceof ArrayBuffer) {
    [encoded, text] = ["bytes", base64Of(value instanceof ArrayBuffer ? new Uint8Array(value) : value)];
  } else {
    return part;
  }
  const copy: Holder = { ...part };
  if (holder === part) copy[key] = text;
  else copy["data"] = { ...holder, [key]: text }; // tagged file data: only a file's `data` is tagged
  const options = (part["providerOptions"] ?? {}) as Record<string, Holder>;
  copy["providerOptions"] = { ...options, [MARK]: { ...(options[MARK] ?? {}), encoded } };
  return copy;
}

function decodePart(part: Holder): Holder {
  const options = part["providerOptions"] as Record<string, Holder> | undefined;
  const encoded = options?.[MARK]?.["encoded"] as Encoded | undefined;
  const slot = payloadSlot(part);
  if (encoded === undefined || slot === undefined || options === undefined) return part;
  const [holder, key] = slot;
  const text = holder[key];
  if (typeof text !== "string") return part;
  const value = encoded === "url" ? new URL(text) : bytesOf(text);
  const copy: Holder = { ...part };
  if (holder === part) copy[key] = value;
  else copy["data"] = { ...holder, [key]: value };
  const { [MARK]: mark, ...rest } = options;
  const { encoded: _, ...markRest } = mark ?? {};
  const kept = Object.keys(markRest).length > 0 ? { ...rest, [MARK]: markRest } : rest;
  if (Object.keys(kept).length > 0) copy["providerOptions"] = kept;
  else delete copy["providerOptions"];
  return copy;
}

/** Messages with `Uint8Array`, `ArrayBuffer` and `URL` values as JSON carries them, marked. */
export function encodeBinary(messages: readonly ModelMessage[]): ModelMessage[] {
  return messages.map((message) => mediaParts(message, encodePart));
}

/** The inverse of `encodeBinary`: marked parts get their `Uint8Array` or `URL` back. */
export function decodeBinary(messages: readonly ModelMessage[]): ModelMessage[] {
  return messages.map((message) => mediaParts(message, decodePart));
}

/**
 * The thread as AI SDK model messages. The thread's system text, if any, is not among them:
 * it is the render's `instructions` (see `toPrompt`).
 */
export async function toModelMessages(thread: Thread, options: ProviderRenderOptions & CallOptions = {}): Promise<ModelMessage[]> {
  return (await renderAiSdk(thread, options)).messages;
}

/** The thread as `generateText`'s `{instructions?, messages}`. */
export async function toPrompt(thread: Thread, options: ProviderRenderOptions & CallOptions = {}): Promise<AiSdkPrompt> {
  const { instructions, messages } = await renderAiSdk(thread, options);
  return instructions === undefined ? { messages } : { instructions, messages };
}

/**
 * Appends AI SDK model messages to the thread as events, all or none: a turn's
 * `[userMessage, ...result.responseMessages]`, or any `ModelMessage[]`.
 */
export async function appendModelMessages(
  thread: Thread,
  messages: readonly ModelMessage[],
  options: AppendModelMessagesOptions = {},
): Promise<AppendResult> {
  const { iteration, expectedVersion, signal, timeoutMs } = options;
  const call = { signal, timeoutMs };
  const { events } = await thread.client.call<{ events: AnyAgentEvent[] }>(
    "aiSdk/toEvents",
    iteration === undefined ? { messages: encodeBinary(messages) } : { messages: encodeBinary(messages), iteration },
    call,
  );
  return thread.append(events, { ...(expectedVersion === undefined ? {} : { expectedVersion }), ...call });
}
