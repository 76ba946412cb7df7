/**
 * ThreadSession against the Agents SDK's own MemorySession: the same items added, the same items
 * read back, the same items popped in the same order, on the memory and SQLite stores; and the
 * SDK's Runner with a scripted model (offline) on both sessions.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import {
  Agent,
  MemorySession,
  Runner,
  setTracingDisabled,
  tool,
  Usage,
  type AgentInputItem,
  type Model,
  type ModelRequest,
  type ModelResponse,
  type Session,
} from "@openai/agents-core";
import { ThreadKeeper } from "../src/index.js";
import { fromResponsesItem, fromWireItem, ThreadSession, toResponsesItem, toWireItem } from "../src/openai-agents.js";
import type { OpenAIResponsesInputItem } from "../src/types.js";
import { BINARY, MEMORY_ARGS } from "./helpers.js";

/** Every item kind a session stores, in the batches a run adds them in. */
const BATCHES: AgentInputItem[][] = [
  [
    { type: "message", role: "system", content: "Be brief." },
    { type: "message", role: "user", content: "Weather in Lyon and Paris?" },
  ],
  [
    { type: "reasoning", id: "rs_1", content: [{ type: "input_text", text: "Two cities." }], providerData: { encryptedContent: "gAAAAB-secret==" } },
    { type: "function_call", id: "fc_1", callId: "c1", name: "weather", arguments: '{"city":"Lyon"}', status: "completed" },
    { type: "function_call", id: "fc_2", callId: "c2", name: "weather", arguments: '{"city":"Paris"}', status: "completed" },
  ],
  [
    { type: "function_call_result", callId: "c1", name: "weather", status: "completed", output: { type: "text", text: "sunny" } },
    { type: "function_call_result", callId: "c2", name: "weather", status: "completed", output: "rain" },
  ],
  [
    { type: "reasoning", content: [], providerData: { encryptedContent: "gAAAAC-more==" } },
    {
      type: "message",
      id: "msg_1",
      role: "assistant",
      status: "completed",
      content: [
        { type: "output_text", text: "Lyon: sunny. " },
        { type: "output_text", text: "Paris: rain." },
      ],
    },
  ],
  [{ type: "message", role: "user", content: [{ type: "input_text", text: "And " }, { type: "input_text", text: "tomorrow?" }] }],
  [
    { type: "function_call", callId: "c3", name: "forecast", arguments: "{}" },
    { type: "function_call_result", callId: "c3", name: "forecast", status: "completed", output: "[Tool call not completed]: gave up" },
    { type: "hosted_tool_call", name: "web_search_call", status: "completed", providerData: { query: "lyon" } },
    { type: "message", role: "assistant", status: "completed", content: [{ type: "output_text", text: "No forecast." }] },
  ],
];

/** The two cases, on their own. */
const SHORT_CASES: AgentInputItem[][][] = [
  [
    [
      { type: "message", role: "user", content: "q" },
      { type: "function_call", callId: "c1", name: "t", arguments: "{}", status: "completed" },
      { type: "function_call_result", callId: "c1", name: "t", status: "completed", output: { type: "text", text: "r" } },
    ],
  ],
  [
    [
      { type: "message", role: "user", content: "q" },
      { type: "reasoning", id: "rs_1", content: [], providerData: { encryptedContent: "gAAAA" } },
      { type: "message", role: "assistant", status: "completed", content: [{ type: "output_text", text: "a" }] },
    ],
  ],
];

/** A 2 × 1 PNG and a tiny PDF, as base64. */
const PNG = "iVBORw0KGgoAAAANSUhEUgAAAAIAAAABCAIAAAB7QOjdAAAADUlEQVR4nGP4z8AARAAI/gH/xp559wAAAABJRU5ErkJggg==";
const PDF = "JVBERi0xLjQKMSAwIG9iajw8Pj5lbmRvYmoKdHJhaWxlcjw8Pj4KJSVFT0YK";

/** Images and files: data URLs, a provider's file id, a URL, and a tool output of parts. */
const MEDIA_BATCHES: AgentInputItem[][] = [
  [
    {
      type: "message",
      role: "user",
      content: [
        { type: "input_text", text: "What is in these?" },
        { type: "input_image", image: `data:image/png;base64,${PNG}`, detail: "auto" },
        { type: "input_file", file: `data:application/pdf;base64,${PDF}`, filename: "r.pdf" },
        { type: "input_image", image: { id: "file-abc" }, detail: "high" },
        { type: "input_image", image: "https://example.com/a.png", detail: "low" },
        { type: "input_file", file: { url: "https://example.com/b.pdf" } },
      ],
    },
  ],
  [
    { type: "function_call", callId: "c1", name: "chart", arguments: "{}", status: "completed" },
    {
      type: "function_call_result",
      callId: "c1",
      name: "chart",
      status: "completed",
      output: [
        { type: "input_text", text: "the chart" },
        { type: "input_image", image: `data:image/png;base64,${PNG}` },
        { type: "input_file", file: `data:application/pdf;base64,${PDF}`, filename: "c.pdf" },
      ],
    },
  ],
];

/** The Python client's items (wire form), as its tests add them. */
const WIRE_BATCHES: Record<string, unknown>[][] = [
  [{ role: "system", content: "Be brief." }, { role: "user", content: "Weather in Lyon and Paris?" }],
  [
    { type: "reasoning", id: "rs_1", summary: [{ type: "summary_text", text: "Two cities." }], encrypted_content: "gAAAAB-secret==" },
    { type: "function_call", id: "fc_1", call_id: "c1", name: "weather", arguments: '{"city": "Lyon"}', status: "completed" },
  ],
  [{ type: "function_call_output", call_id: "c1", output: "sunny" }],
  [
    { type: "reasoning", id: "rs_2", summary: [], encrypted_content: "gAAAAC-more==", status: "completed" },
    { type: "message", id: "msg_1", role: "assistant", status: "completed", content: [{ type: "output_text", text: "Lyon: sunny.", annotations: [] }] },
  ],
  [
    { type: "function_call", call_id: "c3", name: "forecast", arguments: "{}" },
    { type: "function_call_output", call_id: "c3", output: "[Tool call not completed]: gave up" },
    { type: "web_search_call", id: "ws_1", status: "completed", action: { type: "search", query: "lyon" } },
  ],
];

/** Items appended as this session kept them before the wire form: each event keeping the SDK's item. */
async function appendInSdkForm(tk: ThreadKeeper, thread: Awaited<ReturnType<ThreadKeeper["openThread"]>>, items: AgentInputItem[]): Promise<void> {
  const converted = items.map(toResponsesItem);
  const { events } = await tk.call<{ events: Record<string, unknown>[] }>("responses/toEvents", { items: converted, keepItems: true });
  let next = 0;
  for (const event of events) {
    const block = event.block as Record<string, unknown> | undefined;
    const reasoning = event.type === "turn_block" && block?.kind === "reasoning";
    if ("responsesItem" in event ? event.responsesItem === null : !reasoning) continue;
    const item = items[next++]!;
    const same = JSON.stringify(fromResponsesItem(converted[next - 1] as OpenAIResponsesInputItem, new Map())) === JSON.stringify(item);
    if (reasoning && !("responsesItem" in event) && same) continue;
    event.responsesItem = item;
  }
  await thread.append(events as never);
}

async function assertSameAsReference(ours: Session, reference: Session, batches: AgentInputItem[][]): Promise<void> {
  for (const batch of batches) {
    await ours.addItems(structuredClone(batch));
    await reference.addItems(structuredClone(batch));
    assert.deepEqual(await ours.getItems(), await reference.getItems());
  }
  for (const limit of [1, 2, 3, 100]) assert.deepEqual(await ours.getItems(limit), await reference.getItems(limit), `limit ${limit}`);
  for (;;) {
    const popped = await ours.popItem();
    const expected = await reference.popItem();
    assert.deepEqual(popped, expected);
    assert.deepEqual(await ours.getItems(), await reference.getItems());
    assert.deepEqual(await ours.getItems(2), await reference.getItems(2));
    if (expected === undefined) break;
  }
}

for (const store of ["memory", "sqlite"] as const) {
  describe(`ThreadSession against MemorySession (${store} store)`, () => {
    let tk: ThreadKeeper;
    let dir: string;
    before(async () => {
      dir = mkdtempSync(join(tmpdir(), "tk-agents-"));
      const args = store === "memory" ? MEMORY_ARGS : ["--store", `sqlite:${join(dir, "threads.db")}`];
      tk = await ThreadKeeper.spawn({ binary: BINARY, args, clientInfo: { name: "threadkeeper-js-tests" } });
    });
    after(async () => {
      await tk.close();
      rmSync(dir, { recursive: true, force: true });
    });

    test("every item kind: the same items, pops and reads", async () => {
      await assertSameAsReference(new ThreadSession(await tk.openThread()), new MemorySession(), BATCHES);
    });

    test("the issue's cases: a call and its output; reasoning before a reply", async () => {
      for (const batches of SHORT_CASES) await assertSameAsReference(new ThreadSession(await tk.openThread()), new MemorySession(), batches);
    });

    test("a thread written without kept items reads as its render, and pops its last event", async () => {
      const thread = await tk.openThread({ settings: { instructions: "Be brief." } });
      await thread.append(
        await tk.responsesToEvents([
          { type: "message", role: "user", content: "q" },
          { type: "function_call", call_id: "c1", name: "t", arguments: "{}" },
        ]),
      );
      const session = new ThreadSession(thread);
      const old: AgentInputItem[] = [
        { type: "message", role: "system", content: "Be brief." },
        { type: "message", role: "user", content: "q" },
        { type: "function_call", callId: "c1", name: "t", arguments: "{}", status: "completed" },
        {
          type: "function_call_result",
          callId: "c1",
          name: "t",
          status: "completed",
          output: { type: "text", text: "[Tool call not completed]: no result was recorded for this call" },
        },
      ];
      assert.deepEqual(await session.getItems(), old);
      assert.deepEqual(await session.popItem(), old[3]);
      assert.deepEqual(await session.getItems(), old.slice(0, 2));
      // Items added after it are read back as added.
      const added: AgentInputItem = { type: "message", role: "user", content: [{ type: "input_text", text: "again" }] };
      await session.addItems([added]);
      assert.deepEqual((await session.getItems()).at(-1), added);
      assert.deepEqual(await session.popItem(), added);
    });

    test("a thread kept in the SDK's own form (as earlier versions kept it) reads and pops as written", async () => {
      const thread = await tk.openThread();
      const reference = new MemorySession();
      for (const batch of BATCHES) {
        await appendInSdkForm(tk, thread, structuredClone(batch));
        await reference.addItems(structuredClone(batch));
      }
      const session = new ThreadSession(thread);
      assert.deepEqual(await session.getItems(), await reference.getItems());
      // Items added now are kept in the wire form, after the old ones.
      const added: AgentInputItem[] = [{ type: "message", role: "user", content: "Next?" }, BATCHES[2]![0]!];
      await session.addItems(structuredClone(added));
      await reference.addItems(structuredClone(added));
      assert.deepEqual(((await thread.events()).at(-1) as Record<string, unknown>).responsesItem, toWireItem(added[1]));
      await assertSameAsReference(session, reference, []);
    });

    test("the model input is the render it was when items were kept in the SDK's own form", async () => {
      const [kept, old] = [await tk.openThread(), await tk.openThread()];
      const session = new ThreadSession(kept);
      for (const batch of BATCHES) {
        await session.addItems(structuredClone(batch));
        await appendInSdkForm(tk, old, structuredClone(batch));
      }
      for (const format of ["openai-chat", "openai-responses", "anthropic", "text"] as const) {
        assert.deepEqual(await kept.render(format as never), await old.render(format as never), format);
      }
      // The messages render gives an assistant message's id now that the wire item kept it.
      const withoutIds = (render: unknown) => JSON.parse(JSON.stringify(render), (key, value) => (key === "id" && typeof value === "string" && value.startsWith("msg_") ? undefined : value));
      const [messages, oldMessages] = [await kept.render("messages"), await old.render("messages")];
      assert.notDeepEqual(messages, oldMessages);
      assert.deepEqual(withoutIds(messages), withoutIds(oldMessages));
      // The XML document writes every field of the events it has no type for (reasoning blocks,
      // items kept on their own): there, what is kept differs; every other line is the same.
      const lines = async (thread: typeof kept) => (await thread.render("xml")).text.split("\n");
      const [ours, theirs] = [await lines(kept), await lines(old)];
      assert.equal(ours.length, theirs.length);
      const differing = ours.filter((line, i) => line !== theirs[i]);
      assert.ok(differing.length > 0);
      for (const line of differing) assert.match(line, /^ {2}<event type="(turn_block|responses_item)" /);
    });

    test("items kept in the wire form by the Python client read as the SDK reads them", async () => {
      const thread = await tk.openThread();
      for (const batch of WIRE_BATCHES) await thread.append(await tk.call<{ events: never[] }>("responses/toEvents", { items: batch, keepItems: true }).then((r) => r.events));
      const session = new ThreadSession(thread);
      const wire = WIRE_BATCHES.flat();
      const items = await session.getItems();
      // A reasoning item its block describes whole keeps nothing else, so it reads as earlier
      // versions read such a block; every other item as the SDK reads the wire item.
      const describedWhole = (item: Record<string, unknown>) => item.type === "reasoning" && "id" in item && Object.keys(item).every((key) => ["type", "id", "summary", "encrypted_content"].includes(key));
      assert.deepEqual(
        items,
        wire.map((item) => (describedWhole(item) ? JSON.parse(JSON.stringify(fromResponsesItem(item as never, new Map()))) : fromWireItem(item))),
      );
      assert.ok(wire.some(describedWhole) && wire.some((item) => item.type === "reasoning" && !describedWhole(item)));
      assert.deepEqual(
        items.map((item) => JSON.parse(JSON.stringify(toWireItem(item)))),
        wire.map((item) => (item.type === "function_call_output" ? { ...item, status: "completed" } : item)),
      );
      assert.deepEqual(await session.getItems(3), items.slice(-3));
      for (let i = items.length - 1; i >= 0; i--) assert.deepEqual(await session.popItem(), items[i]);
      assert.equal(await session.popItem(), undefined);
    });

    test("what is kept beside an item, when it is not a difference, is not read as one", async () => {
      const written = await tk.openThread();
      const result = BATCHES[2]![0]!;
      await new ThreadSession(written).addItems([structuredClone(result)]);
      const [event] = (await written.events()) as Record<string, unknown>[];
      assert.deepEqual(event!.agentsJs, { set: { name: "weather" } });
      const copy = await tk.openThread();
      await copy.append([{ ...event!, agentsJs: { unset: "name" } }] as never);
      const session = new ThreadSession(copy);
      assert.deepEqual(await session.getItems(), [fromWireItem(event!.responsesItem)]);
      assert.deepEqual(await session.popItem(), fromWireItem(event!.responsesItem));
    });

    test("images and files: the same items, pops and reads; the bytes are blobs, not base64 in events", async () => {
      const thread = await tk.openThread();
      await assertSameAsReference(new ThreadSession(thread), new MemorySession(), MEDIA_BATCHES);
      const kept = await tk.openThread();
      const session = new ThreadSession(kept);
      for (const batch of MEDIA_BATCHES) await session.addItems(structuredClone(batch));
      const events = JSON.stringify(await kept.events());
      assert.ok(!events.includes(PNG) && !events.includes(PDF), events);
      assert.deepEqual(await session.getItems(), MEDIA_BATCHES.flat());
    });

    test("the SDK's Runner with an image in, and a tool that answers with an image, keeps and sees the same items", async () => {
      setTracingDisabled(true);
      const chart = tool({
        name: "chart",
        description: "Draws a chart.",
        parameters: { type: "object", properties: {}, required: [], additionalProperties: false },
        strict: true,
        execute: async () => [
          { type: "text", text: "the chart" },
          { type: "image", image: `data:image/png;base64,${PNG}` },
        ],
      });
      const input: AgentInputItem[] = [MEDIA_BATCHES[0]![0]!];
      const outputs = (): ModelResponse["output"][] => [
        [{ type: "function_call", id: "fc_1", callId: "c1", name: "chart", arguments: "{}", status: "completed" }],
        [{ type: "message", id: "msg_1", role: "assistant", status: "completed", content: [{ type: "output_text", text: "A red chart." }] }],
      ];
      const run = async (session: Session) => {
        const model = new ScriptedModel(outputs());
        await new Runner().run(new Agent({ name: "charts", instructions: "Draw.", model, tools: [chart] }), structuredClone(input), { session });
        return model;
      };
      const ours = new ThreadSession(await tk.openThread());
      const reference = new MemorySession();
      const [ourModel, referenceModel] = [await run(ours), await run(reference)];
      assert.deepEqual(
        ourModel.requests.map((r) => r.input),
        referenceModel.requests.map((r) => r.input),
      );
      const items = await reference.getItems();
      assert.ok(JSON.stringify(items.at(-2)).includes(PNG), "the tool's image is in its output item");
      await assertSameAsReference(ours, reference, []);
    });

    test("the SDK's Runner with a scripted model keeps and sees the same items", async () => {
      setTracingDisabled(true);
      const ours = new ThreadSession(await tk.openThread());
      const reference = new MemorySession();
      const ourModel = new ScriptedModel();
      const referenceModel = new ScriptedModel();
      await runTwice(ours, ourModel);
      await runTwice(reference, referenceModel);
      assert.deepEqual(
        ourModel.requests.map((r) => r.input),
        referenceModel.requests.map((r) => r.input),
      );
      await assertSameAsReference(ours, reference, []);
    });
  });
}

const weather = tool({
  name: "weather",
  description: "The weather in a city.",
  parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"], additionalProperties: false },
  strict: true,
  execute: async (input) => ({ Lyon: "sunny", Paris: "rain" })[(input as { city: string }).city] ?? "unknown",
});

async function runTwice(session: Session, model: ScriptedModel): Promise<void> {
  const agent = new Agent({ name: "weather", instructions: "Use the tools.", model, tools: [weather] });
  const runner = new Runner();
  await runner.run(agent, "Weather in Lyon and Paris?", { session });
  await runner.run(agent, "What did I ask?", { session });
}

/** Reasoning, two parallel calls, then replies in two parts; it records what it was sent. */
class ScriptedModel implements Model {
  readonly requests: ModelRequest[] = [];
  constructor(private readonly outputs: ModelResponse["output"][] = WEATHER_OUTPUTS()) {}

  async getResponse(request: ModelRequest): Promise<ModelResponse> {
    this.requests.push({ ...request, input: structuredClone(request.input) });
    return { usage: new Usage(), output: this.outputs.shift()! };
  }

  async *getStreamedResponse(): AsyncIterable<never> {
    throw new Error("not used");
  }
}

function WEATHER_OUTPUTS(): ModelResponse["output"][] {
  return [
    [
      { type: "reasoning", id: "rs_1", content: [{ type: "input_text", text: "two cities" }], providerData: { encryptedContent: "gAAAA1" } },
      { type: "function_call", id: "fc_1", callId: "c1", name: "weather", arguments: '{"city":"Lyon"}', status: "completed" },
      { type: "function_call", id: "fc_2", callId: "c2", name: "weather", arguments: '{"city":"Paris"}', status: "completed" },
    ],
    [
      {
        type: "message",
        id: "msg_1",
        role: "assistant",
        status: "completed",
        content: [
          { type: "output_text", text: "Lyon is sunny, " },
          { type: "output_text", text: "Paris has rain." },
        ],
      },
    ],
    [{ type: "message", id: "msg_2", role: "assistant", status: "completed", content: [{ type: "output_text", text: "You asked about the weather." }] }],
  ];
}
