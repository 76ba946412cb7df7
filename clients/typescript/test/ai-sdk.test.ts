/**
 * The AI SDK adapter against the real server, proven by the SDK's own tool loop: `generateText`
 * with tools and `stopWhen: stepCountIs(n)` on `MockLanguageModelV4` (offline). Each turn is
 * appended with `appendModelMessages`; `toModelMessages` must give the SDK's own history back,
 * and the next turn's prompt must be the same whether the history comes from the thread or
 * from the SDK's array.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { generateText, jsonSchema, modelMessageSchema, stepCountIs, tool, type ModelMessage } from "ai";
import { MockLanguageModelV4 } from "ai/test";
import { ThreadKeeperError, type ThreadKeeper } from "../src/index.js";
import { appendModelMessages, toModelMessages, toPrompt } from "../src/ai-sdk.js";
import { spawnMemory } from "./helpers.js";

let tk: ThreadKeeper;
before(async () => {
  tk = await spawnMemory();
});
after(async () => {
  await tk.close();
});

type GenerateResult = Awaited<ReturnType<MockLanguageModelV4["doGenerate"]>>;
type Content = GenerateResult["content"];

const usage: GenerateResult["usage"] = {
  inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 5, text: 5, reasoning: 0 },
};

function step(content: Content, toolCalls: boolean): GenerateResult {
  return { content, finishReason: { unified: toolCalls ? "tool-calls" : "stop", raw: undefined }, usage, warnings: [] };
}

function call(toolCallId: string, toolName: string, input: unknown) {
  return { type: "tool-call" as const, toolCallId, toolName, input: JSON.stringify(input) };
}

/** A model that answers with `steps` in turn, and records every prompt it receives. */
function scriptedModel(steps: GenerateResult[]): MockLanguageModelV4 {
  const queue = [...steps];
  return new MockLanguageModelV4({
    doGenerate: async () => {
      const next = queue.shift();
      if (!next) throw new Error("the script has no more steps");
      return next;
    },
  });
}

const tools = {
  weather: tool({
    description: "The weather in a city",
    inputSchema: jsonSchema<{ city: string }>({ type: "object", properties: { city: { type: "string" } }, required: ["city"] }),
    execute: async ({ city }) => ({ city, tempC: city === "Zürich" ? 18 : 25, sky: "☀︎ clear" }),
  }),
  greet: tool({
    inputSchema: jsonSchema<{ name: string }>({ type: "object", properties: { name: { type: "string" } } }),
    execute: async ({ name }) => `こんにちは, ${name}!`,
  }),
  delete_files: tool({
    inputSchema: jsonSchema<{ glob: string }>({ type: "object", properties: { glob: { type: "string" } } }),
    execute: async ({ glob }): Promise<string> => {
      throw new Error(`permission denied: ${glob}`);
    },
  }),
};

/** Turn one: two parallel calls (one throws), then a call with a text result, then the answer. */
const TURN_ONE: GenerateResult[] = [
  step(
    [
      { type: "reasoning", text: "Two lookups at once; the cleanup may fail." },
      { type: "text", text: "Checking Zürich and cleaning up…" },
      call("call_w1", "weather", { city: "Zürich" }),
      call("call_d1", "delete_files", { glob: "*.tmp" }),
    ],
    true,
  ),
  step([call("call_g1", "greet", { name: "Zoë" })], true),
  step([{ type: "text", text: "18 °C in Zürich; I could not delete *.tmp. こんにちは, Zoë!" }], false),
];

/** Turn two: one more call, then the answer. */
const TURN_TWO: GenerateResult[] = [
  step([call("call_w2", "weather", { city: "Rome" }), call("call_g2", "greet", { name: "Ana" })], true),
  step([{ type: "text", text: "25 °C in Rome." }], false),
];

async function run(steps: GenerateResult[], messages: ModelMessage[], instructions?: string) {
  const model = scriptedModel(steps);
  const result = await generateText({ model, tools, instructions, messages, stopWhen: stepCountIs(5) });
  return { result, prompts: model.doGenerateCalls.map((c) => c.prompt) };
}

/** As JSON carries them: the SDK writes absent optional fields as keys holding `undefined`. */
function plain<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}

function assertValid(messages: ModelMessage[]): void {
  for (const [i, message] of messages.entries()) {
    const parsed = modelMessageSchema.safeParse(message);
    assert.ok(parsed.success, `message ${i} is not a valid ModelMessage: ${JSON.stringify(message)}`);
  }
}

describe("AI SDK adapter", () => {
  test("a generateText tool loop appended turn by turn reads back as the SDK's own history", async () => {
    const thread = await tk.openThread();
    const user1: ModelMessage = { role: "user", content: "Weather in Zürich, clean *.tmp, greet Zoë ✓" };
    const one = await run(TURN_ONE, [user1]);
    assert.equal(one.result.steps.length, 3);
    const history: ModelMessage[] = plain([user1, ...one.result.responseMessages]);
    // The loop itself produced what the test is about: a throwing tool, JSON and text results.
    const outputs = history.flatMap((m) => (m.role === "tool" ? m.content : [])).map((p) => (p.type === "tool-result" ? p.output.type : p.type));
    assert.deepEqual(outputs, ["json", "error-text", "text"]);

    await appendModelMessages(thread, history, { iteration: 1 });
    const fromThread = await toModelMessages(thread);
    assert.deepEqual(fromThread, history);
    assertValid(fromThread);

    // Turn two continues from the thread; the model must receive the same prompt either way.
    const user2: ModelMessage = { role: "user", content: [{ type: "text", text: "And Rome? Greet Ana too." }] };
    const viaThread = await run(TURN_TWO, [...fromThread, user2]);
    const viaArray = await run(TURN_TWO, [...history, user2]);
    assert.deepEqual(viaThread.prompts, viaArray.prompts);
    assert.equal(viaThread.prompts.length, 2);
    assert.deepEqual(plain(viaThread.result.responseMessages), plain(viaArray.result.responseMessages));

    const info = await appendModelMessages(thread, [user2, ...viaThread.result.responseMessages], {
      iteration: 2,
      expectedVersion: thread.info.version,
    });
    assert.equal(info.version, thread.info.version);
    const all = plain([...history, user2, ...viaArray.result.responseMessages]);
    const back = await toModelMessages(thread);
    assert.deepEqual(back, all);
    assertValid(back);

    // The same thread as XML: every call, and the error that answered the throwing tool.
    const xml = await thread.renderXml();
    const calls = all.flatMap((m) => (m.role === "assistant" && typeof m.content !== "string" ? m.content : [])).filter((p) => p.type === "tool-call");
    assert.equal(calls.length, 5);
    assert.equal(xml.match(/<event type="tool_input"/g)?.length, calls.length);
    for (const part of calls) {
      const input = JSON.stringify(part.input).replaceAll("&", "&amp;").replaceAll('"', "&quot;");
      assert.ok(xml.includes(`name="${part.toolName}" iteration="${part.toolCallId.endsWith("1") ? 1 : 2}">${input}</event>`), `${part.toolCallId} missing from the XML`);
    }
    assert.match(xml, /<event type="error" id="\d+" iteration="1" recoverable="true">Error: permission denied: \*\.tmp<\/event>/);
    assert.equal(xml.match(/<event type="tool_output"/g)?.length, 4);
  });

  test("message fields the events have no field for come back: providerOptions, string and part contents, system, error-json, denials", async () => {
    const thread = await tk.openThread();
    const messages: ModelMessage[] = [
      { role: "system", content: "Be brief.", providerOptions: { anthropic: { cacheControl: { type: "ephemeral" } } } },
      { role: "user", content: [{ type: "text", text: "First, " }, { type: "text", text: "then second.", providerOptions: { x: { y: 1 } } }] },
      {
        role: "assistant",
        content: [
          { type: "reasoning", text: "hmm", providerOptions: { anthropic: { signature: "sig" } } },
          { type: "tool-call", toolCallId: "a", toolName: "lookup", input: "raw text input" },
          { type: "tool-call", toolCallId: "b", toolName: "lookup", input: { q: 1 }, providerOptions: { openai: { itemId: "fc_1" } } },
          { type: "tool-call", toolCallId: "c", toolName: "lookup", input: {} },
          { type: "tool-call", toolCallId: "d", toolName: "lookup", input: {} },
        ],
      },
      {
        role: "tool",
        content: [
          { type: "tool-result", toolCallId: "a", toolName: "lookup", output: { type: "json", value: "42" } },
          { type: "tool-result", toolCallId: "b", toolName: "lookup", output: { type: "error-json", value: { code: 7 } } },
          { type: "tool-result", toolCallId: "c", toolName: "lookup", output: { type: "execution-denied" } },
          { type: "tool-result", toolCallId: "d", toolName: "lookup", output: { type: "execution-denied", reason: "not now" } },
        ],
      },
      { role: "assistant", content: "Done.", providerOptions: { openai: { phase: "final" } } },
    ];
    assertValid(messages);
    await appendModelMessages(thread, messages);
    assert.deepEqual(await toModelMessages(thread), messages);
  });

  test("a thread made of plain events renders as valid model messages, repaired", async () => {
    const thread = await tk.openThread();
    await thread.append([
      { type: "tool_call", toolName: "weather", toolCallId: "c1", args: { city: "Paris" }, iteration: 0 },
      { type: "message", role: "system", content: "Budget: 1 call", iteration: 0 },
      { type: "tool_call", toolName: "weather", toolCallId: "c2", args: { city: "Rome" }, iteration: 0 },
      { type: "tool_result", toolCallId: "c2", result: { tempC: 25 }, iteration: 0 },
      { type: "error", error: "timeout", recoverable: true, toolCallId: "c1", iteration: 0 },
      { type: "tool_call", toolName: "delete", toolCallId: "c3", args: {}, iteration: 1 },
    ]);
    const prompt = await toPrompt(thread, { instructions: "Be brief." });
    const { messages } = prompt;
    assert.equal(prompt.instructions, "Be brief.");
    assertValid(messages);
    assert.deepEqual(
      messages.map((m) => m.role),
      // c1 is answered as not completed when c2 is made after the system note that waited for
      // it; the error then stands alone; c3 gets a not-completed answer at the end.
      ["user", "assistant", "tool", "user", "assistant", "tool", "user", "assistant", "tool"],
    );
    // The model can take them as they are.
    const { prompts } = await run([step([{ type: "text", text: "ok" }], false)], messages, prompt.instructions);
    assert.equal(prompts.length, 1);
    assert.deepEqual(prompts[0]![0], { role: "system", content: "Be brief." });
  });

  test("parts the events cannot hold are refused, naming the part; nothing is appended", async () => {
    const thread = await tk.openThread();
    const misplaced: ModelMessage = {
      role: "assistant",
      content: [
        { type: "text", text: "done" },
        { type: "tool-result", toolCallId: "c1", toolName: "t", output: { type: "text", value: "x" } },
      ],
    };
    await assert.rejects(appendModelMessages(thread, [misplaced]), (error: unknown) => {
      assert.ok(error instanceof ThreadKeeperError);
      assert.equal(error.code, -32602);
      assert.match(error.message, /messages\[0\]\.content\[1\]\.type/);
      return true;
    });
    assert.deepEqual(await toModelMessages(thread), []);
  });

  test("an image part is kept: the message reads back as a user message of content parts", async () => {
    const thread = await tk.openThread();
    const image: ModelMessage = { role: "user", content: [{ type: "text", text: "look" }, { type: "image", image: "https://example.com/a.png" }] };
    await appendModelMessages(thread, [image]);
    const events = (await thread.events()) as Record<string, unknown>[];
    assert.equal(events.length, 1);
    assert.deepEqual(events[0]?.["content"], [
      { type: "text", text: "look" },
      { type: "image", url: "https://example.com/a.png" },
    ]);
  });
});
