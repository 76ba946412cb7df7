/**
 * The LangChain and OpenAI Agents adapters against the real server: round trips through
 * `messages/toEvents` and `responses/toEvents`, LangChain's chat-history base class, and the
 * Agents SDK's own Runner with a session kept in a thread (a scripted model, offline).
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { AIMessage, HumanMessage, SystemMessage, ToolMessage, type BaseMessage } from "@langchain/core/messages";
import { Agent, Runner, setTracingDisabled, tool, Usage, type AgentInputItem, type Model, type ModelRequest, type ModelResponse } from "@openai/agents-core";
import { type AnyAgentEvent, type ThreadKeeper } from "../src/index.js";
import { ThreadChatMessageHistory } from "../src/langchain-history.js";
import { ThreadSession } from "../src/openai-agents.js";
import { spawnMemory } from "./helpers.js";

let tk: ThreadKeeper;
before(async () => {
  tk = await spawnMemory();
});
after(async () => {
  await tk.close();
});

/** Events whose every field survives events → messages → events (no timestamps, no extra fields). */
const FAITHFUL: AnyAgentEvent[] = [
  { type: "message", role: "user", content: "What is 2+2?", iteration: 0 },
  { type: "tool_call", toolName: "calculator", toolCallId: "c1", args: { expression: "2+2" }, iteration: 0 },
  { type: "tool_result", toolCallId: "c1", result: "4", iteration: 0 },
  { type: "tool_call", toolName: "search", toolCallId: "c2", args: { q: "x" }, iteration: 0 },
  { type: "error", error: "search is down", recoverable: true, toolCallId: "c2", iteration: 0 },
  { type: "message", role: "system", content: "Budget: 2 more calls.", iteration: 0 },
  { type: "human_input_received", response: "go on", iteration: 0 },
  { type: "message", role: "assistant", content: "The answer is 4.", iteration: 0 },
];

function stripMessageIds(events: AnyAgentEvent[]): AnyAgentEvent[] {
  return events.map((event) => {
    const { messageId: _id, ...rest } = event as Record<string, unknown>;
    return rest as AnyAgentEvent;
  });
}

describe("LangChain adapter", () => {
  test("events → messages → LangChain objects → events is exact for the faithful events", async () => {
    const thread = await tk.openThread();
    await thread.append(FAITHFUL);
    const messages = await thread.toLangChainMessages();
    assert.deepEqual(stripMessageIds(await tk.messagesToEvents(messages)), FAITHFUL);
  });

  test("what the messages leave out (README: round trip losses)", async () => {
    const thread = await tk.openThread();
    const lost: AnyAgentEvent[] = [
      { type: "completion", result: "4", verified: true, iteration: 0 },
      { type: "summary", summarizedIterations: [0], summary: "s", iteration: 1 },
    ];
    await thread.append([FAITHFUL[0]!, ...lost, { ...FAITHFUL[7]!, timestamp: 1700000000000, iteration: 3 } as AnyAgentEvent]);
    const back = stripMessageIds(await tk.messagesToEvents(await thread.toLangChainMessages()));
    // completion: gone; summary: reaches the model as system text; timestamp and iteration: not in messages.
    assert.ok(!back.some((e) => e.type === "completion"));
    assert.deepEqual(back.at(-1), { type: "message", role: "assistant", content: "The answer is 4.", iteration: 0 });
  });

  test("LangChain messages → events keeps system, tool status and message ids", async () => {
    const messages: BaseMessage[] = [
      new SystemMessage({ content: "Be brief.", id: "m0" }),
      new HumanMessage({ content: "Look it up.", id: "m1" }),
      new AIMessage({ content: "", id: "m2", tool_calls: [{ id: "c1", name: "search", args: { q: "x" }, type: "tool_call" }] }),
      new ToolMessage({ content: "timeout", tool_call_id: "c1", status: "error", id: "m3" }),
      new AIMessage({ content: "It failed.", id: "m4" }),
    ];
    const events = (await tk.messagesToEvents(messages, { iteration: 2 })) as Record<string, unknown>[];
    assert.deepEqual(
      events.map((e) => [e.type, e.iteration]),
      [["message", 2], ["message", 2], ["tool_call", 2], ["error", 2], ["message", 2]],
    );
    assert.deepEqual(events[0], { type: "message", role: "system", content: "Be brief.", iteration: 2, messageId: "m0" });
    assert.equal(events[3]!.toolCallId, "c1");
    assert.deepEqual(events.map((e) => e.messageId), ["m0", "m1", "m2", "m3", "m4"]);
  });

  test("ThreadChatMessageHistory: add, get, clear through LangChain's base class", async () => {
    const thread = await tk.openThread({ settings: { instructions: "Be brief." }, metadata: { user: "ann" } });
    const history = new ThreadChatMessageHistory(thread, { iteration: 1 });
    await history.addUserMessage("What is 2+2?");
    await history.addMessages([
      new AIMessage({ content: "", tool_calls: [{ id: "c1", name: "calculator", args: { expression: "2+2" }, type: "tool_call" }] }),
      new ToolMessage({ content: "4", tool_call_id: "c1" }),
      new AIMessage("4."),
    ]);
    const messages = await history.getMessages();
    assert.deepEqual(
      messages.map((m) => [m.getType(), m.content]),
      [["system", "Be brief."], ["human", "What is 2+2?"], ["ai", ""], ["tool", "4"], ["ai", "4."]],
    );
    assert.deepEqual((await thread.events()).map((e) => e.iteration), [1, 1, 1, 1]);
    await history.clear();
    assert.deepEqual(await history.getMessages().then((m) => m.map((x) => x.getType())), ["system"]);
    assert.deepEqual(thread.info.metadata, { user: "ann" });
  });
});

/** A model that answers from a script: a tool call first, then text; it records what it was sent. */
class ScriptedModel implements Model {
  readonly requests: ModelRequest[] = [];
  private turn = 0;

  async getResponse(request: ModelRequest): Promise<ModelResponse> {
    this.requests.push(request);
    const usage = new Usage();
    if (this.turn++ % 2 === 0) {
      return { usage, output: [{ type: "function_call", callId: `call_${this.turn}`, name: "add", arguments: '{"a":2,"b":2}', status: "completed" }] };
    }
    return { usage, output: [{ type: "message", role: "assistant", status: "completed", content: [{ type: "output_text", text: "It is 4." }] }] };
  }

  async *getStreamedResponse(): AsyncIterable<never> {
    throw new Error("not used");
  }
}

describe("OpenAI Agents adapter", () => {
  setTracingDisabled(true);
  const add = tool({
    name: "add",
    description: "Adds two numbers.",
    parameters: { type: "object", properties: { a: { type: "number" }, b: { type: "number" } }, required: ["a", "b"], additionalProperties: false },
    strict: true,
    execute: async (input) => {
      const { a, b } = input as { a: number; b: number };
      return String(a + b);
    },
  });

  test("the SDK's Runner keeps its history in a ThreadSession", async () => {
    const thread = await tk.openThread();
    const session = new ThreadSession(thread);
    const model = new ScriptedModel();
    const agent = new Agent({ name: "calc", instructions: "Add numbers.", model, tools: [add] });
    const runner = new Runner();
    const first = await runner.run(agent, "What is 2+2?", { session });
    assert.equal(first.finalOutput, "It is 4.");
    const events = (await thread.events()) as Record<string, unknown>[];
    assert.deepEqual(
      events.map((e) => e.type),
      ["message", "tool_call", "tool_result", "message"],
    );
    assert.deepEqual(events[1]!.args, { a: 2, b: 2 });
    assert.equal(events[2]!.result, "4");

    // A second run sees the first one's history, read back from the thread.
    const second = await runner.run(agent, "And again?", { session });
    assert.equal(second.finalOutput, "It is 4.");
    const input = model.requests.at(-2)!.input as AgentInputItem[];
    const texts = input.map((item) => JSON.stringify(item));
    assert.ok(texts[0]!.includes("What is 2+2?"), texts.join("\n"));
    assert.ok(texts.some((t) => t.includes('"function_call_result"') && t.includes('"4"')), texts.join("\n"));
    assert.ok(texts.at(-1)!.includes("And again?"));
  });

  test('iteration "turn": a call that starts with a user message opens the next iteration', async () => {
    const thread = await tk.openThread();
    const session = new ThreadSession(thread, { iteration: "turn" });
    await session.addItems([{ type: "message", role: "user", content: "hi" }, { type: "function_call", callId: "c1", name: "add", arguments: "{}", status: "completed" }]);
    await session.addItems([{ type: "function_call_result", callId: "c1", name: "add", status: "completed", output: { type: "text", text: "2" } }]);
    await session.addItems([{ role: "user", content: "again" }]);
    await session.addItems([{ type: "message", role: "assistant", status: "completed", content: [{ type: "output_text", text: "2." }] }]);
    assert.deepEqual((await thread.events()).map((e) => e.iteration), [0, 0, 0, 1, 1]);
  });

  test("getItems(limit), popItem and clearSession", async () => {
    const thread = await tk.openThread();
    const session = new ThreadSession(thread, { iteration: 4 });
    await session.addItems([
      { type: "message", role: "user", content: "hi" },
      { type: "function_call", callId: "c1", name: "add", arguments: '{"a":1,"b":1}', status: "completed" },
      { type: "function_call_result", callId: "c1", name: "add", status: "completed", output: { type: "text", text: "2" } },
      { type: "message", role: "assistant", status: "completed", content: [{ type: "output_text", text: "2." }] },
    ]);
    assert.equal(await session.getSessionId(), thread.id);
    const all = await session.getItems();
    assert.equal(all.length, 4);
    assert.deepEqual(await session.getItems(2), all.slice(2));
    assert.deepEqual(all[2], { type: "function_call_result", callId: "c1", name: "add", status: "completed", output: { type: "text", text: "2" } });
    assert.deepEqual(await session.popItem(), all[3]);
    assert.deepEqual(await session.getItems(), all.slice(0, 3));
    assert.deepEqual((await thread.events()).map((e) => e.iteration), [4, 4, 4]);
    await session.clearSession();
    assert.deepEqual(await session.getItems(), []);
    assert.equal(await session.popItem(), undefined);
  });
});
