/**
 * One TypeScript turn of a session the Python Agents SDK shares (clients/interop): the SDK's own
 * Runner with a scripted model (offline) on a ThreadSession over a SQLite thread, or a thread
 * written as this client's earlier versions wrote it. Prints what it added and read, as JSON.
 *
 *   node build-test/interop/agents-session-step.js begin|continue|reason-and-pop|old-form|media-write|read SQLITE_FILE THREAD_ID
 */
import {
  Agent,
  Runner,
  setTracingDisabled,
  tool,
  Usage,
  type AgentInputItem,
  type Model,
  type ModelRequest,
  type ModelResponse,
} from "@openai/agents-core";
import { findBinary, ThreadKeeper } from "../src/index.js";
import { fromResponsesItem, ThreadSession, toResponsesItem, toWireItem } from "../src/openai-agents.js";
import type { OpenAIResponsesInputItem } from "../src/types.js";

setTracingDisabled(true);

type Item = Record<string, unknown>;

/** A ThreadSession that notes the items the SDK adds, as it adds them. */
class NotingSession extends ThreadSession {
  readonly added: AgentInputItem[] = [];

  override async addItems(items: AgentInputItem[]): Promise<void> {
    this.added.push(...structuredClone(items));
    await super.addItems(items);
  }
}

/** Answers with the next scripted output (items as the SDK's OpenAI model gives them) and notes each request's input. */
class ScriptedModel implements Model {
  readonly inputs: unknown[] = [];

  constructor(private readonly outputs: ModelResponse["output"][]) {}

  async getResponse(request: ModelRequest): Promise<ModelResponse> {
    this.inputs.push(structuredClone(request.input));
    return { usage: new Usage(), output: this.outputs.shift()! };
  }

  async *getStreamedResponse(): AsyncIterable<never> {
    throw new Error("not used");
  }
}

const weather = tool({
  name: "weather",
  description: "The weather in a city.",
  parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"], additionalProperties: false },
  strict: true,
  execute: async (input) => ({ Lyon: "sunny", Paris: "rain" })[(input as { city: string }).city] ?? "unknown",
});

function say(id: string, text: string): AgentInputItem {
  return { type: "message", id, role: "assistant", status: "completed", content: [{ type: "output_text", text, providerData: { annotations: [], logprobs: [] } }], providerData: {} };
}

/** The first turn: a tool call and its answer. */
const BEGIN: ModelResponse["output"][] = [
  [{ type: "function_call", id: "fc_ts1", callId: "call_ts1", name: "weather", arguments: '{"city":"Lyon"}', status: "completed", providerData: { type: "function_call", id: "fc_ts1" } }],
  [say("msg_ts1", "Lyon is sunny.")],
];

/** A later turn: an answer from the history. */
const CONTINUE: ModelResponse["output"][] = [[say("msg_ts2", "Lyon is sunny and Paris has rain.")]];

/** A later turn with reasoning before the answer (the answer is popped after it). */
const REASON: ModelResponse["output"][] = [
  [
    { type: "reasoning", id: "rs_ts1", content: [{ type: "input_text", text: "From the history.", providerData: { type: "summary_text" } }], providerData: { type: "reasoning", id: "rs_ts1", encrypted_content: "gAAAAts1==" } },
    say("msg_ts3", "It was sunny."),
  ],
];

/** Items of every kind this client converts, as its earlier versions kept them (the SDK's own form). */
const OLD_FORM: AgentInputItem[] = [
  { type: "message", role: "user", content: "Weather in Lyon?" },
  { type: "reasoning", id: "rs_1", content: [{ type: "input_text", text: "One city." }], providerData: { encryptedContent: "gAAAAB==" } },
  { type: "reasoning", content: [{ type: "input_text", text: "No id." }], providerData: { encryptedContent: "gAAAAC==" } },
  { type: "function_call", id: "fc_1", callId: "c1", name: "weather", arguments: '{"city":"Lyon"}', status: "completed", providerData: { type: "function_call", id: "fc_1" } },
  { type: "function_call_result", callId: "c1", name: "weather", status: "completed", output: { type: "text", text: "sunny" } },
  { type: "hosted_tool_call", id: "ws_1", name: "web_search_call", status: "completed", providerData: { type: "web_search_call", action: { type: "search", query: "lyon" } } },
  say("msg_1", "Sunny."),
  {
    type: "message",
    role: "user",
    content: [
      { type: "input_text", text: "Look: " },
      { type: "input_image", image: "https://example.com/a.png" },
      { type: "input_file", file: { id: "file_1" }, filename: "a.pdf" },
    ],
  },
  { type: "function_call", callId: "c2", name: "chart", arguments: "{}", status: "completed" },
  {
    type: "function_call_result",
    callId: "c2",
    name: "chart",
    status: "completed",
    output: [
      { type: "input_text", text: "see" },
      { type: "input_image", image: "https://example.com/c.png", detail: "low" },
    ],
  },
  {
    type: "message",
    role: "assistant",
    status: "completed",
    content: [
      { type: "output_text", text: "Cited.", providerData: { annotations: [{ type: "url_citation", url: "https://example.com", start_index: 0, end_index: 1, title: "x" }] } },
      { type: "refusal", refusal: "Not that." },
    ],
  },
  { type: "hosted_tool_call", id: "mcp_1", name: "mcp_call", status: "completed", providerData: { type: "mcp_call", id: "mcp_1", name: "lookup", arguments: "{}", server_label: "docs" } },
  { type: "compaction", id: "cmp_1", encrypted_content: "gAAAAD==" },
];

/** A 2 × 1 PNG, as base64. */
const PNG = "iVBORw0KGgoAAAANSUhEUgAAAAIAAAABCAIAAAB7QOjdAAAADUlEQVR4nGP4z8AARAAI/gH/xp559wAAAABJRU5ErkJggg==";

/** A user message with an image (a data URL) and a tool output holding one. */
const MEDIA: AgentInputItem[] = [
  {
    type: "message",
    role: "user",
    content: [
      { type: "input_text", text: "What is this?" },
      { type: "input_image", image: `data:image/png;base64,${PNG}`, detail: "high" },
    ],
  },
  { type: "function_call", callId: "c_img", name: "chart", arguments: "{}", status: "completed" },
  {
    type: "function_call_result",
    callId: "c_img",
    name: "chart",
    status: "completed",
    output: [
      { type: "input_text", text: "the chart" },
      { type: "input_image", image: `data:image/png;base64,${PNG}`, detail: "low" },
    ],
  },
];

/** Appends items as this client's earlier versions did: each event keeping the SDK's item itself. */
async function appendInSdkForm(tk: ThreadKeeper, threadId: string, items: AgentInputItem[]): Promise<void> {
  const thread = await tk.openThread({ threadId });
  const converted = items.map(toResponsesItem);
  const { events } = await tk.call<{ events: Item[] }>("responses/toEvents", { items: converted, keepItems: true });
  let next = 0;
  for (const event of events) {
    const block = event.block as Item | undefined;
    const reasoning = event.type === "turn_block" && block?.kind === "reasoning";
    if ("responsesItem" in event ? event.responsesItem === null : !reasoning) continue;
    const item = items[next++]!;
    const same = JSON.stringify(fromResponsesItem(converted[next - 1] as OpenAIResponsesInputItem, new Map())) === JSON.stringify(item);
    if (reasoning && !("responsesItem" in event) && same) continue;
    event.responsesItem = item;
  }
  await thread.append(events as never);
}

async function run(tk: ThreadKeeper, threadId: string, input: string, outputs: ModelResponse["output"][], pop = false): Promise<Item> {
  const session = new NotingSession(await tk.openThread({ threadId }), { iteration: "turn" });
  const before = await session.getItems();
  const model = new ScriptedModel(outputs);
  const agent = new Agent({ name: "weather", instructions: "Use the tools.", model, tools: [weather] });
  await new Runner().run(agent, input, { session });
  return {
    before,
    beforeWire: before.map(toWireItem),
    added: session.added,
    addedWire: session.added.map(toWireItem),
    read: await session.getItems(),
    modelInputs: model.inputs,
    ...(pop ? { popped: await session.popItem(), readAfterPop: await session.getItems() } : {}),
  };
}

async function main(): Promise<void> {
  const [step, db, threadId] = process.argv.slice(2);
  if (!step || !db || !threadId) throw new Error("usage: agents-session-step begin|continue|reason-and-pop|old-form|media-write|read SQLITE_FILE THREAD_ID");
  const tk = await ThreadKeeper.spawn({ binary: findBinary(), args: ["--store", `sqlite:${db}`], clientInfo: { name: "threadkeeper-interop" } });
  try {
    let result: Item;
    if (step === "begin") result = await run(tk, threadId, "Weather in Lyon?", BEGIN);
    else if (step === "continue") result = await run(tk, threadId, "And both?", CONTINUE);
    else if (step === "reason-and-pop") result = await run(tk, threadId, "Was it sunny?", REASON, true);
    else if (step === "old-form") {
      await appendInSdkForm(tk, threadId, OLD_FORM);
      const session = new ThreadSession(await tk.openThread({ threadId }));
      result = { added: OLD_FORM, addedWire: OLD_FORM.map(toWireItem), read: await session.getItems() };
    } else if (step === "media-write") {
      await new ThreadSession(await tk.openThread({ threadId })).addItems(structuredClone(MEDIA));
      result = { added: MEDIA, addedWire: MEDIA.map(toWireItem) };
    } else if (step === "read") {
      const read = await new ThreadSession(await tk.openThread({ threadId })).getItems();
      result = { read, readWire: read.map(toWireItem) };
    } else throw new Error(`unknown step ${step}`);
    process.stdout.write(JSON.stringify(result));
  } finally {
    await tk.close();
  }
}

await main();
