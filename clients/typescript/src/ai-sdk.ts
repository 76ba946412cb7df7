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
  return thread.client.call<AiSdkRender>("thread/render", params, { signal, timeoutMs });
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
    iteration === undefined ? { messages } : { messages, iteration },
    call,
  );
  return thread.append(events, { ...(expectedVersion === undefined ? {} : { expectedVersion }), ...call });
}
