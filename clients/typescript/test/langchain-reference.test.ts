/**
 * ThreadChatMessageHistory against LangChain's own InMemoryChatMessageHistory: message by message
 * and field by field after every step, and what still differs (as the README says).
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { InMemoryChatMessageHistory } from "@langchain/core/chat_history";
import { AIMessage, HumanMessage, SystemMessage, ToolMessage, type BaseMessage } from "@langchain/core/messages";
import { type ThreadKeeper } from "../src/index.js";
import { ThreadChatMessageHistory } from "../src/langchain-history.js";
import { spawnMemory } from "./helpers.js";

let tk: ThreadKeeper;
before(async () => {
  tk = await spawnMemory();
});
after(async () => {
  await tk.close();
});

/** Every field a history keeps, as InMemoryChatMessageHistory keeps it. */
function fields(message: BaseMessage): Record<string, unknown> {
  const m = message as unknown as Record<string, unknown>;
  const picked: Record<string, unknown> = { type: message.getType(), content: message.content, id: message.id, name: message.name };
  for (const key of ["tool_calls", "tool_call_id", "status", "additional_kwargs", "response_metadata", "usage_metadata", "artifact"]) picked[key] = m[key];
  return picked;
}

function assertSameMessages(ours: BaseMessage[], reference: BaseMessage[]): void {
  assert.equal(ours.length, reference.length);
  ours.forEach((message, index) => {
    assert.equal(message.constructor, reference[index]!.constructor, `message ${index}`);
    assert.deepEqual(fields(message), fields(reference[index]!), `message ${index}`);
  });
}

const STEPS: BaseMessage[][] = [
  [new HumanMessage({ content: "What is the weather in Lyon?", id: "h1", name: "ann", additional_kwargs: { lang: "en" } })],
  [
    new AIMessage({
      content: "Let me check.",
      id: "a1",
      name: "assistant",
      tool_calls: [{ id: "call_1", name: "weather", args: { city: "Lyon" }, type: "tool_call" }],
      additional_kwargs: { refusal: null },
      response_metadata: { model_name: "gpt-x", finish_reason: "tool_calls" },
      usage_metadata: { input_tokens: 20, output_tokens: 10, total_tokens: 30 },
    }),
    new ToolMessage({ content: "sunny", tool_call_id: "call_1", name: "weather", id: "t1", artifact: { source: "api" } }),
  ],
  [new AIMessage({ content: "It is sunny in Lyon.", id: "a2", response_metadata: { finish_reason: "stop" }, usage_metadata: { input_tokens: 40, output_tokens: 6, total_tokens: 46 } })],
  [
    new HumanMessage("And Paris?"),
    new AIMessage({
      content: "",
      tool_calls: [
        { id: "call_2", name: "weather", args: { city: "Paris" }, type: "tool_call" },
        { id: "call_3", name: "weather", args: { city: "Nice" }, type: "tool_call" },
      ],
    }),
    new ToolMessage({ content: "rain", tool_call_id: "call_2", name: "weather" }),
    new ToolMessage({ content: "wind", tool_call_id: "call_3", name: "weather" }),
  ],
];

/** A 2 × 1 PNG, a tiny PDF and an empty WAV, as base64. */
const PNG = "iVBORw0KGgoAAAANSUhEUgAAAAIAAAABCAIAAAB7QOjdAAAADUlEQVR4nGP4z8AARAAI/gH/xp559wAAAABJRU5ErkJggg==";
const PDF = "JVBERi0xLjQKMSAwIG9iajw8Pj5lbmRvYmoKdHJhaWxlcjw8Pj4KJSVFT0YK";
const WAV = "UklGRiQAAABXQVZFZm10IBAAAAABAAEAQB8AAIA+AAACABAAZGF0YQAAAAA=";

/** Media in LangChain's standard blocks (v1: bytes as `base64` or a `url`, a file's name in `extras`; v0.3) and the older `image_url`. */
const MEDIA_STEPS: BaseMessage[][] = [
  [
    new HumanMessage({
      content: [
        { type: "text", text: "What are these?" },
        { type: "image", base64: PNG, mime_type: "image/png" },
        { type: "image", url: "https://example.com/a.png" },
        { type: "file", base64: PDF, mime_type: "application/pdf", extras: { filename: "r.pdf" } },
        { type: "audio", base64: WAV, mime_type: "audio/wav" },
      ],
      id: "h-media",
    }),
  ],
  [new AIMessage({ content: "A red image, a report and silence.", id: "a-media" })],
  // The v0.3 standard form and the older image_url form come back in their own form.
  [
    new HumanMessage({
      content: [
        { type: "image", source_type: "base64", data: PNG, mime_type: "image/png" },
        { type: "file", source_type: "base64", data: PDF, mime_type: "application/pdf", filename: "s.pdf" },
        { type: "audio", source_type: "base64", data: WAV, mime_type: "audio/wav" },
        { type: "image", source_type: "url", url: "https://example.com/b.png" },
        { type: "image_url", image_url: { url: `data:image/png;base64,${PNG}`, detail: "high" } },
        { type: "image_url", image_url: { url: "https://example.com/c.png" } },
      ],
    }),
  ],
];

/** An Anthropic tool-use turn: signed thinking (one with empty text), redacted thinking, text and a call. */
const REASONING_STEPS: BaseMessage[][] = [
  [new HumanMessage({ content: "Weather in Rome?", id: "h-r" })],
  [
    new AIMessage({
      content: [
        { type: "thinking", thinking: "Rome: call the tool ✓", signature: "sig-a" },
        { type: "thinking", thinking: "", signature: "sig-omitted" },
        { type: "redacted_thinking", data: "red-a" },
        { type: "text", text: "Let me check." },
      ],
      id: "a-r",
      tool_calls: [{ id: "call_r", name: "weather", args: { city: "Rome" }, type: "tool_call" }],
      response_metadata: { model_provider: "anthropic", model: "claude-sonnet-4-5" },
    }),
    new ToolMessage({ content: "18 °C", tool_call_id: "call_r", name: "weather", id: "t-r" }),
  ],
  [new AIMessage({ content: "18 °C in Rome.", id: "a-r2" })],
];

describe("ThreadChatMessageHistory against InMemoryChatMessageHistory", () => {
  test("thinking blocks with tool calls: the same messages, and the anthropic render replays the thinking first", async () => {
    const thread = await tk.openThread();
    const ours = new ThreadChatMessageHistory(thread);
    const reference = new InMemoryChatMessageHistory();
    for (const step of REASONING_STEPS) {
      await ours.addMessages(step);
      await reference.addMessages(step);
      assertSameMessages(await ours.getMessages(), await reference.getMessages());
    }
    const kinds = ((await thread.events()) as Record<string, unknown>[]).map((e) => e["type"]);
    assert.deepEqual(kinds.slice(1, 5), ["reasoning", "reasoning", "reasoning", "message"]);
    const body = (await thread.render("anthropic")) as { messages: { role: string; content: Record<string, unknown>[] }[] };
    const content = body.messages[1]!.content;
    assert.deepEqual(content.slice(0, 3), [
      { type: "thinking", thinking: "Rome: call the tool ✓", signature: "sig-a" },
      { type: "thinking", thinking: "", signature: "sig-omitted" },
      { type: "redacted_thinking", data: "red-a" },
    ]);
    assert.deepEqual(content.slice(3).map((block) => block["type"]), ["text", "tool_use"]);
  });

  test("images, files and audio in v1, v0.3 and image_url blocks: the same messages; bytes kept as blobs", async () => {
    const thread = await tk.openThread();
    const ours = new ThreadChatMessageHistory(thread);
    const reference = new InMemoryChatMessageHistory();
    for (const step of MEDIA_STEPS) {
      await ours.addMessages(step);
      await reference.addMessages(step);
      assertSameMessages(await ours.getMessages(), await reference.getMessages());
    }
    const events = JSON.stringify(await thread.events());
    for (const bytes of [PNG, PDF, WAV]) assert.ok(!events.includes(bytes), events);
  });

  test("every field matches after every step", async () => {
    const ours = new ThreadChatMessageHistory(await tk.openThread());
    const reference = new InMemoryChatMessageHistory();
    for (const step of STEPS) {
      await ours.addMessages(step);
      await reference.addMessages(step);
      assertSameMessages(await ours.getMessages(), await reference.getMessages());
    }
    await ours.clear();
    await reference.clear();
    assert.deepEqual(await ours.getMessages(), await reference.getMessages());
  });

  test("what still differs is what the README says", async () => {
    const ours = new ThreadChatMessageHistory(await tk.openThread());
    await ours.addMessages([
      new SystemMessage({ content: "Be brief.", id: "s1" }),
      new HumanMessage({ content: [{ type: "text", text: "Hello " }, { type: "text", text: "there" }], id: "h1" }),
      new AIMessage({ content: "", tool_calls: [{ id: "c1", name: "t", args: {}, type: "tool_call" }] }),
    ]);
    const waiting = (await ours.getMessages()).at(-1)!;
    assert.ok(waiting instanceof ToolMessage);
    assert.equal(waiting.content, "[Tool call not completed]: no result was recorded for this call");
    await ours.addMessages([new ToolMessage({ content: "boom", tool_call_id: "c1", status: "error", name: "t" })]);
    const got = await ours.getMessages();
    assert.deepEqual(
      got.map((m) => m.constructor.name),
      ["HumanMessage", "HumanMessage", "AIMessage", "ToolMessage"],
    );
    assert.deepEqual([got[0]!.content, got[0]!.id], ["[System]: Be brief.", "s1"]);
    assert.equal(got[1]!.content, "Hello there");
    const error = got[3] as ToolMessage;
    assert.deepEqual([error.content, error.status, error.name], ["[Error (recoverable)]: boom", "error", "t"]);
    // A status of "success" given explicitly comes back unset, which LangChain reads as success.
    await ours.clear();
    await ours.addMessages([
      new AIMessage({ content: "", tool_calls: [{ id: "c2", name: "t", args: {}, type: "tool_call" }] }),
      new ToolMessage({ content: "ok", tool_call_id: "c2", status: "success" }),
    ]);
    assert.equal(((await ours.getMessages()).at(-1) as ToolMessage).status, undefined);
  });
});
