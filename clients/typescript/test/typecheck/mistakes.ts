/**
 * Typical mistakes in code that uses this package, each of which must fail to compile. This
 * file is type-checked (never run) by `npm run typecheck`: every line after a
 * `@ts-expect-error` must have a type error, so a mistake that starts to type-check fails the
 * build. Keep each mistake on the one line after its comment. The same code written right is in
 * `usage.ts`, which must compile.
 */
import type { BaseMessage } from "@langchain/core/messages";
import {
  imagePart,
  unknownEvent,
  type AgentEvent,
  type AnyAgentEvent,
  type StoredMessage,
  type Thread,
  type ThreadKeeper,
} from "../../src/index.js";
import { ThreadChatMessageHistory } from "../../src/langchain-history.js";
import { ThreadSession } from "../../src/openai-agents.js";
import { appendModelMessages } from "../../src/ai-sdk.js";

export async function mistakes(tk: ThreadKeeper, thread: Thread, event: AnyAgentEvent): Promise<void> {
  // Event fields.
  // @ts-expect-error toolCallId misspelled on a tool call
  await thread.append([{ type: "tool_call", toolName: "search", toolCallID: "c1", args: {}, iteration: 0 }]);
  // @ts-expect-error toolCallId written in LangChain's spelling on a tool result
  await thread.append([{ type: "tool_result", tool_call_id: "c1", result: "ok", iteration: 0 }]);
  // @ts-expect-error args as a JSON string instead of an object
  await thread.append([{ type: "tool_call", toolName: "search", toolCallId: "c1", args: '{"q":"x"}', iteration: 0 }]);
  // @ts-expect-error a role the protocol does not have
  await thread.append([{ type: "message", role: "human", content: "hi", iteration: 0 }]);
  // @ts-expect-error iteration missing
  await thread.append([{ type: "message", role: "user", content: "hi" }]);
  // @ts-expect-error iteration as a string
  await thread.append([{ type: "message", role: "user", content: "hi", iteration: "0" }]);
  // @ts-expect-error event type misspelled
  await thread.append([{ type: "toolcall", toolName: "search", toolCallId: "c1", args: {}, iteration: 0 }]);
  // @ts-expect-error message content as LangChain's image_url blocks instead of content parts
  await thread.append([{ type: "message", role: "user", content: [{ type: "image_url", image_url: { url: "https://x.test/a.png" } }], iteration: 0 }]);
  // @ts-expect-error an error event without recoverable
  await thread.append([{ type: "error", error: "boom", iteration: 0 }]);
  // @ts-expect-error recoverable as a string
  await thread.append([{ type: "error", error: "boom", recoverable: "yes", iteration: 0 }]);
  // @ts-expect-error the optional toolCallId of an error misspelled
  await thread.append([{ type: "error", error: "boom", recoverable: true, toolCallID: "c1", iteration: 0 }]);
  // @ts-expect-error name instead of toolName
  await thread.append([{ type: "tool_call", name: "search", toolCallId: "c1", args: {}, iteration: 0 }]);
  // @ts-expect-error summarizedIterations as one number
  await thread.append([{ type: "summary", summarizedIterations: 3, summary: "s", iteration: 4 }]);
  // @ts-expect-error an urgency the protocol does not have
  await thread.append([{ type: "human_input_requested", question: "OK?", urgency: "urgent", iteration: 0 }]);
  // @ts-expect-error content instead of response on a human answer
  await thread.append([{ type: "human_input_received", content: "yes", iteration: 0 }]);
  // @ts-expect-error completion without verified
  await thread.append([{ type: "completion", result: "done", iteration: 0 }]);
  // @ts-expect-error an extra field on a known event without WithExtraFields
  await thread.append([{ type: "tool_result", toolCallId: "c1", result: "ok", iteration: 0, durationMs: 12 }]);
  // @ts-expect-error an event of an unknown type without unknownEvent()
  await thread.append([{ type: "approval", decision: "granted", iteration: 0 }]);
  // @ts-expect-error unknownEvent() with a known type (its fields would go unchecked)
  unknownEvent({ type: "tool_call", iteration: 0 });
  // @ts-expect-error one event instead of an array
  await thread.append({ type: "message", role: "user", content: "hi", iteration: 0 });
  // @ts-expect-error a field of one event type read without narrowing
  console.log(event.toolCallId);
  const known: AgentEvent = { type: "message", role: "user", content: "hi", iteration: 0 };
  // @ts-expect-error narrowed to message, then read as a tool call
  if (known.type === "message") console.log(known.args);

  // Events read back, narrowed on their type.
  for (const e of await thread.events()) {
    // @ts-expect-error a field of the narrowed event misspelled
    if (e.type === "tool_call") console.log(e.toolNmae);
    // @ts-expect-error a field of another event type on the narrowed one
    if (e.type === "tool_call") console.log(e.content);
    // @ts-expect-error a known type misspelled in the comparison
    if (e.type === "toolcall") console.log(e);
    switch (e.type) {
      case "message": case "tool_call": case "tool_result": case "error": case "human_input_requested":
      case "human_input_received": case "completion": case "summary":
        break;
      default: {
        // @ts-expect-error a switch over the known types is not exhaustive: unknown events remain
        const none: never = e;
        console.log(none);
      }
    }
  }
  // @ts-expect-error an object literal cannot pass for an unknown event by its type's marker text
  await thread.append([{ type: "(unknown event type)", iteration: 0 }]);

  // Renders and their results.
  // @ts-expect-error the result of render("xml") used as messages
  const messages: StoredMessage[] = (await thread.render("xml")).messages;
  // @ts-expect-error the messages render has no text
  console.log((await thread.render("messages")).text.length, messages);
  // @ts-expect-error renderXml answers a string, not messages
  (await thread.renderXml()).map((m: StoredMessage) => m.type);
  // @ts-expect-error stored messages are not LangChain BaseMessages
  const lc: BaseMessage[] = await thread.renderMessages();
  // @ts-expect-error a render format that does not exist
  await thread.render("openai");
  // @ts-expect-error a context mode in the wrong case
  await thread.renderMessages({ contextMode: "XML" });
  // @ts-expect-error fromEvent is for XML deltas, not provider requests
  await thread.renderOpenAIChat({ fromEvent: 3 });
  // @ts-expect-error a stored message of LangChain type "user" (it is "human")
  await tk.messagesToXml([{ type: "user", data: { content: "hi" } }]);
  // @ts-expect-error a thread setting misspelled
  await tk.openThread({ settings: { responsePrefx: "Next:" } });
  // @ts-expect-error a tokenizer the server does not have
  await thread.tokens({ tokenizer: "gpt2" });
  // @ts-expect-error a cacheControl value misspelled
  await thread.renderAnthropic({ cacheControl: "automatic" });
  // @ts-expect-error a cache TTL Anthropic does not have
  await thread.renderAnthropic({ cacheControl: { ttl: "10m" } });
  // @ts-expect-error cacheControl as Anthropic's block mark instead of the option
  await thread.renderAnthropic({ cacheControl: { type: "ephemeral" } });
  // @ts-expect-error an Anthropic cache TTL on an OpenAI render
  await thread.renderOpenAIChat({ cacheControl: { ttl: "5m" } });
  // @ts-expect-error an OpenAI breakpoints mode misspelled
  await thread.renderOpenAIResponses({ cacheControl: { breakpoints: "all" } });
  // @ts-expect-error OpenAI's field name instead of the option's
  await thread.renderOpenAIChat({ cacheControl: { prompt_cache_key: "k" } });
  // @ts-expect-error cacheControl on a format without prompt caching
  await thread.render("ai-sdk", { cacheControl: "auto" });
  // @ts-expect-error content read as a string when explicit breakpoints make it text parts
  (await thread.renderOpenAIChat({ cacheControl: "auto" })).messages[0]?.content?.trim();
  // @ts-expect-error cacheControl on the messages render
  await thread.render("messages", { cacheControl: "auto" });
  // @ts-expect-error the budget's dropTo misspelled
  await thread.render("messages", { budget: { maxTokens: 30_000, dropTO: 18_000 } });
  // @ts-expect-error system read as a string when it may be text blocks
  (await thread.renderAnthropic({ cacheControl: "auto" })).system?.trim();

  // Content parts and blobs.
  const png = new Uint8Array([0x89, 0x50, 0x4e, 0x47]);
  // @ts-expect-error an image as Anthropic's base64 source block instead of a part with `data`
  await thread.append([{ type: "message", role: "user", content: [{ type: "image", source: { type: "base64", media_type: "image/png", data: "iVBO" } }], iteration: 0 }]);
  // @ts-expect-error a part with its bytes and a blob at once
  await thread.append([{ type: "message", role: "user", content: [{ type: "image", data: png, blob: "sha256:00" }], iteration: 0 }]);
  // @ts-expect-error a blob id without its "sha256:" prefix
  await thread.append([{ type: "message", role: "user", content: [{ type: "image", blob: "9f86d081884c7d65", mediaType: "image/png" }], iteration: 0 }]);
  // @ts-expect-error a detail the protocol does not have
  imagePart(png, { detail: "max" });
  // @ts-expect-error media_type in the provider's spelling
  imagePart(png, { media_type: "image/png" });
  // @ts-expect-error a filename on an image part (files have one)
  await thread.append([{ type: "message", role: "user", content: [{ type: "image", data: png, filename: "a.png" }], iteration: 0 }]);
  // @ts-expect-error a tool result with neither result nor content
  await thread.append([{ type: "tool_result", toolCallId: "c1", iteration: 0 }]);
  // @ts-expect-error tool result content as a string (content is parts; a string goes in result)
  await thread.append([{ type: "tool_result", toolCallId: "c1", content: "done", iteration: 0 }]);
  // @ts-expect-error events read back hold no bytes: their media parts name a blob
  for (const e of await thread.events()) if (e.type === "message" && typeof e.content !== "string") for (const p of e.content) if (p.type === "image") p.data.byteLength;
  // @ts-expect-error a blob's bytes read as base64 text (getBlob answers bytes)
  (await tk.getBlob("sha256:00")).data.startsWith("iVBO");
  // @ts-expect-error the media type as a second argument instead of an option
  await tk.putBlob(png, "image/png");

  // Options of every call.
  // @ts-expect-error timeoutMs as a duration string
  await tk.escapeXml("x", { timeoutMs: "5s" });
  // @ts-expect-error the controller instead of its signal
  await thread.renderXml({ signal: new AbortController() });
  // @ts-expect-error events by offset and tail at once
  await thread.events({ offset: 2, tail: 3 });
  // @ts-expect-error a fork at a version and at an event at once
  await thread.fork({ atVersion: 2, atEvent: 5 });

  // Adapters.
  // @ts-expect-error the history wants a thread, not the client
  new ThreadChatMessageHistory(tk);
  // @ts-expect-error strings instead of LangChain messages
  await new ThreadChatMessageHistory(thread).addMessages(["hi"]);
  // @ts-expect-error OpenAI chat messages where LangChain messages are expected
  await tk.messagesToEvents([{ role: "user", content: "hi" }]);
  // @ts-expect-error the session's iteration as a string
  new ThreadSession(thread, { iteration: "1" });
  // @ts-expect-error LangChain's stored-message form where AI SDK model messages are expected
  await appendModelMessages(thread, [{ type: "human", data: { content: "hi" } }]);
  // @ts-expect-error a tool call's arguments under LangChain's name instead of the SDK's `input`
  await appendModelMessages(thread, [{ role: "assistant", content: [{ type: "tool-call", toolCallId: "c1", toolName: "t", args: {} }] }]);
  console.log(lc);
}
