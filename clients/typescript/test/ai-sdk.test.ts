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

const PNG = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52, 1, 2, 3]);
const PDF = Buffer.from("%PDF-1.4\n% threadkeeper ✓\n").toString("base64");
const WAV = new Uint8Array([0x52, 0x49, 0x46, 0x46, 36, 0, 0, 0, 0x57, 0x41, 0x56, 0x45, 9, 8, 7]);
const b64 = (bytes: Uint8Array) => Buffer.from(bytes).toString("base64");

/** No event holds base64 of the bytes: they went to blobs. */
async function assertBytesAsBlobs(thread: Awaited<ReturnType<ThreadKeeper["openThread"]>>): Promise<void> {
  const text = JSON.stringify(await thread.events());
  for (const data of [b64(PNG), PDF, b64(WAV)]) assert.ok(!text.includes(data), `event JSON holds base64 ${data.slice(0, 12)}…`);
  assert.match(text, /"blob":"sha256:/);
}

describe("AI SDK adapter: media and reasoning", () => {
  test("images (bytes, base64, data URL) and files (PDF, audio) in a generateText loop come back as the SDK's own history", async () => {
    const thread = await tk.openThread();
    const user: ModelMessage = {
      role: "user",
      content: [
        { type: "text", text: "What is on these? ✓" },
        { type: "image", image: PNG, mediaType: "image/png" },
        { type: "image", image: b64(PNG), mediaType: "image/png" },
        { type: "image", image: `data:image/png;base64,${b64(PNG)}` },
        { type: "file", data: PDF, mediaType: "application/pdf", filename: "report.pdf" },
        { type: "file", data: { type: "data", data: WAV }, mediaType: "audio/wav" },
      ],
    };
    const snapshot = tool({
      inputSchema: jsonSchema<{ page: number }>({ type: "object", properties: { page: { type: "number" } } }),
      execute: async ({ page }) => ({ page }),
      toModelOutput: ({ output }) => ({
        type: "content" as const,
        value: [
          { type: "text" as const, text: `page ${(output as { page: number }).page}` },
          { type: "image-data" as const, data: b64(PNG), mediaType: "image/png" },
          { type: "file" as const, data: { type: "data" as const, data: PDF }, mediaType: "application/pdf", filename: "page.pdf" },
        ],
      }),
    });
    const model = scriptedModel([
      step([call("call_s1", "snapshot", { page: 2 })], true),
      step([{ type: "text", text: "A PNG and a PDF." }], false),
    ]);
    const result = await generateText({ model, tools: { snapshot }, messages: [user], stopWhen: stepCountIs(3) });
    // The model saw the user's media, and the tool's in the second step.
    const partsOf = (content: unknown) => (Array.isArray(content) ? (content as { type: string; output?: { value?: { type: string }[] } }[]) : []);
    const files = model.doGenerateCalls.map(
      (c) => c.prompt.flatMap((m) => partsOf(m.content)).flatMap((p) => [p, ...(p.output?.value ?? [])]).filter((p) => p.type === "file").length,
    );
    assert.deepEqual(files, [5, 7]);
    const history: ModelMessage[] = [user, ...plain(result.responseMessages)];
    await appendModelMessages(thread, history);
    await assertBytesAsBlobs(thread);
    const back = await toModelMessages(thread);
    assert.deepEqual(back, history);
    assertValid(back);
    // The history read back drives the next step as the SDK's own does.
    const next = (m: MockLanguageModelV4) => generateText({ model: m, tools: { snapshot }, messages: m === viaThread ? back : history });
    const viaThread = scriptedModel([step([{ type: "text", text: "ok" }], false)]);
    const viaArray = scriptedModel([step([{ type: "text", text: "ok" }], false)]);
    await next(viaThread);
    await next(viaArray);
    assert.deepEqual(viaThread.doGenerateCalls[0]!.prompt, viaArray.doGenerateCalls[0]!.prompt);
  });

  test("URLs, URL objects and the AI SDK 5 `media` output read back equal", async () => {
    const thread = await tk.openThread();
    const messages: ModelMessage[] = [
      {
        role: "user",
        content: [
          { type: "image", image: new URL("https://example.com/cat.png") },
          { type: "image", image: "https://example.com/dog.png", mediaType: "image/png" },
          { type: "file", data: { type: "url", url: new URL("https://example.com/a.pdf") }, mediaType: "application/pdf" },
          { type: "file", data: new URL("https://example.com/b.wav"), mediaType: "audio/wav", providerOptions: { openai: { detail: "low" } } },
        ],
      },
      { role: "assistant", content: [{ type: "tool-call", toolCallId: "c1", toolName: "shot", input: {} }] },
      {
        role: "tool",
        content: [
          {
            type: "tool-result",
            toolCallId: "c1",
            toolName: "shot",
            output: {
              type: "content",
              value: [
                { type: "text", text: "here" },
                // AI SDK 5's shape, as a history saved then may hold it.
                { type: "media", data: b64(PNG), mediaType: "image/png" } as never,
                { type: "image-url", url: "https://example.com/c.png" },
                { type: "file-data", data: PDF, mediaType: "application/pdf", filename: "x.pdf" },
              ],
            },
          },
        ],
      },
    ];
    await appendModelMessages(thread, messages);
    const back = await toModelMessages(thread);
    assert.deepEqual(back, messages);
    const first = back[0]!.content as { image?: unknown; data?: unknown }[];
    assert.ok(first[0]!.image instanceof URL);
    assert.ok((first[2]!.data as { url: unknown }).url instanceof URL);
  });

  test("signed reasoning and thought signatures are kept as reasoning events and replayed for their provider", async () => {
    const anthropic = await tk.openThread();
    const assistant = (content: ModelMessage["content"]) => ({ role: "assistant", content }) as ModelMessage;
    const turn = (parts: ModelMessage["content"]): ModelMessage[] => [
      { role: "user", content: "Weather?" },
      assistant(parts),
      { role: "tool", content: [{ type: "tool-result", toolCallId: "c1", toolName: "weather", output: { type: "json", value: { c: 18 } } }] },
    ];
    const claude = turn([
      { type: "reasoning", text: "Think ✓", providerOptions: { anthropic: { signature: "sig-a" } } },
      { type: "reasoning", text: "", providerOptions: { anthropic: { redactedData: "redacted-a" } } },
      { type: "tool-call", toolCallId: "c1", toolName: "weather", input: { city: "Rome" } },
    ]);
    await appendModelMessages(anthropic, claude);
    assert.deepEqual(await toModelMessages(anthropic), claude);
    const kinds = ((await anthropic.events()) as Record<string, unknown>[]).map((e) => [e["type"], e["provider"], e["signature"] ?? e["redactedData"]]);
    assert.deepEqual(kinds.slice(1, 3), [["reasoning", "anthropic", "sig-a"], ["reasoning", "anthropic", "redacted-a"]]);
    const body = (await anthropic.render("anthropic")) as { messages: { role: string; content: { type: string }[] }[] };
    assert.deepEqual(body.messages[1]!.content[0], { type: "thinking", thinking: "Think ✓", signature: "sig-a" });
    assert.deepEqual(body.messages[1]!.content[1], { type: "redacted_thinking", data: "redacted-a" });

    const gemini = await tk.openThread();
    const google = turn([
      { type: "reasoning", text: "Plan", providerOptions: { google: { thoughtSignature: "ts-r" } } },
      { type: "text", text: "Looking.", providerOptions: { google: { thoughtSignature: "ts-t" } } },
      { type: "tool-call", toolCallId: "c1", toolName: "weather", input: { city: "Rome" }, providerOptions: { google: { thoughtSignature: "ts-c" } } },
    ]);
    await appendModelMessages(gemini, google);
    assert.deepEqual(await toModelMessages(gemini), google);
    const contents = ((await gemini.render("gemini")) as { contents: { parts: Record<string, unknown>[] }[] }).contents;
    const call = contents[1]!.parts.find((p) => "functionCall" in p)!;
    assert.equal(call["thoughtSignature"], "ts-c");
    assert.deepEqual(contents[1]!.parts[0], { text: "Plan", thought: true, thoughtSignature: "ts-r" });

    const bedrock = await tk.openThread();
    const converse = turn([
      { type: "reasoning", text: "Hmm", providerOptions: { bedrock: { signature: "sig-b" } } },
      { type: "tool-call", toolCallId: "c1", toolName: "weather", input: { city: "Rome" } },
    ]);
    await appendModelMessages(bedrock, converse);
    assert.deepEqual(await toModelMessages(bedrock), converse);
    const messages = ((await bedrock.render("bedrock-converse")) as { messages: { content: Record<string, unknown>[] }[] }).messages;
    assert.deepEqual(messages[1]!.content[0], { reasoningContent: { reasoningText: { text: "Hmm", signature: "sig-b" } } });
  });
});
