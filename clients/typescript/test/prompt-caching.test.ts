/**
 * Anthropic prompt-cache breakpoints (`cacheControl`) and a budget that keeps its cut
 * (`budget.dropTo`), against the real server: the requests stay valid, each step reads what the
 * step before it cached, and a budgeted render only cuts when it must.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import {
  ErrorCodes,
  type AgentEvent,
  type AnthropicContentBlock,
  type AnthropicRequest,
  type OpenAIChatRender,
  type Thread,
  type ThreadKeeper,
} from "../src/index.js";
import { ANTHROPIC_MAX_CACHE_BREAKPOINTS, anthropicProblems } from "./provider-rules.js";
import { loopEvents, rejectsWithCode, spawnMemory } from "./helpers.js";

/**
 * How far back from a breakpoint Anthropic looks for a cached prefix: the breakpoint's block and
 * the 19 before it (its documentation's example: with a breakpoint on block 30, blocks 30 down
 * to 11 are checked).
 */
const LOOKBACK_BLOCKS = 20;

/** One block of a request in the order Anthropic caches them (system, then messages), its mark apart. */
interface FlatBlock {
  key: string;
  breakpoint: boolean;
}

function flatten(request: AnthropicRequest): FlatBlock[] {
  const flat = (role: string, block: AnthropicContentBlock): FlatBlock => {
    const { cache_control, ...content } = block;
    return { key: JSON.stringify([role, content]), breakpoint: cache_control !== undefined };
  };
  const system = request.system === undefined ? [] : typeof request.system === "string" ? [{ type: "text" as const, text: request.system }] : request.system;
  return [...system.map((b) => flat("system", b)), ...request.messages.flatMap((m) => m.content.map((b) => flat(m.role, b)))];
}

/**
 * The longest prefix `next` reads from the cache `previous` wrote, in blocks (0: none): a prefix
 * ending at a breakpoint of `previous`, the same in `next`, and found from a breakpoint of `next`
 * within the lookback.
 */
function cachedPrefixRead(previous: AnthropicRequest, next: AnthropicRequest): number {
  const before = flatten(previous);
  const after = flatten(next);
  let same = 0;
  while (same < before.length && same < after.length && before[same]!.key === after[same]!.key) same++;
  let read = 0;
  before.forEach((block, p) => {
    if (!block.breakpoint || p >= same) return;
    const found = after.some((b, at) => b.breakpoint && at >= p && at - p < LOOKBACK_BLOCKS);
    if (found) read = Math.max(read, p + 1);
  });
  return read;
}

function breakpoints(request: AnthropicRequest): AnthropicContentBlock[] {
  const system = Array.isArray(request.system) ? request.system : [];
  return [...system, ...request.messages.flatMap((m) => m.content)].filter((b) => b.cache_control !== undefined);
}

function assertValid(request: AnthropicRequest): void {
  assert.deepEqual(anthropicProblems(request.system, request.messages), [], JSON.stringify(request));
}

/** One agent step of `calls` parallel tool calls, their results and the assistant's note after them. */
function wideStep(iteration: number, calls: number): AgentEvent[] {
  const events: AgentEvent[] = [];
  for (let k = 0; k < calls; k++) events.push({ type: "tool_call", toolName: "read_file", toolCallId: `s${iteration}_${k}`, args: { path: `src/${k}.rs` }, iteration });
  for (let k = 0; k < calls; k++) events.push({ type: "tool_result", toolCallId: `s${iteration}_${k}`, result: `file ${k} of step ${iteration}`, iteration });
  events.push({ type: "message", role: "assistant", content: `Read ${calls} files.`, iteration });
  return events;
}

let tk: ThreadKeeper;
before(async () => {
  tk = await spawnMemory();
});
after(async () => {
  await tk.close();
});

async function agentThread(): Promise<Thread<ThreadKeeper>> {
  return tk.openThread({ settings: { instructions: "You are a careful coding agent. Read before you write." } });
}

describe("the Anthropic rules' checker", () => {
  test("finds more than 4 breakpoints, one on an empty text, a malformed mark and an empty system", () => {
    const mark = { type: "ephemeral" as const };
    const text = (t: string) => ({ type: "text" as const, text: t, cache_control: mark });
    const five: AnthropicRequest = { system: [text("a")], messages: [{ role: "user", content: [text("b"), text("c"), text("d"), text("e")] }] };
    assert.deepEqual(anthropicProblems(five.system, five.messages), [`5 cache breakpoints, more than ${ANTHROPIC_MAX_CACHE_BREAKPOINTS}`]);
    const empty: AnthropicRequest = { messages: [{ role: "user", content: [text("hi"), { type: "text", text: "", cache_control: mark }] }] };
    assert.ok(anthropicProblems(empty.system, empty.messages).some((p) => p.includes("cache_control on an empty text block")));
    const bad = { messages: [{ role: "user" as const, content: [{ type: "text" as const, text: "hi", cache_control: { type: "persistent", ttl: "1d" } }] }] };
    assert.ok(anthropicProblems(undefined, bad.messages as AnthropicRequest["messages"]).some((p) => p.includes("is not {type")));
    const order: AnthropicRequest = { system: [{ type: "text", text: "s", cache_control: { type: "ephemeral", ttl: "5m" } }], messages: [{ role: "user", content: [{ type: "text", text: "u", cache_control: { type: "ephemeral", ttl: "1h" } }] }] };
    assert.ok(anthropicProblems(order.system, order.messages).some((p) => p.includes("1h breakpoint after a 5m one")));
    assert.deepEqual(anthropicProblems([], []), ["system: an empty list of blocks"]);
  });

  test("the cache replay reads a prefix only from a breakpoint within the lookback", () => {
    const block = (t: string, marked = false): AnthropicContentBlock => (marked ? { type: "text", text: t, cache_control: { type: "ephemeral" } } : { type: "text", text: t });
    const first: AnthropicRequest = { messages: [{ role: "user", content: [block("a"), block("b", true)] }] };
    const near: AnthropicRequest = { messages: [{ role: "user", content: [block("a"), block("b"), block("c", true)] }] };
    assert.equal(cachedPrefixRead(first, near), 2);
    const far: AnthropicRequest = { messages: [{ role: "user", content: [block("a"), block("b"), ...Array.from({ length: 20 }, (_, k) => block(`x${k}`)), block("end", true)] }] };
    assert.equal(cachedPrefixRead(first, far), 0);
    const changed: AnthropicRequest = { messages: [{ role: "user", content: [block("A"), block("b"), block("c", true)] }] };
    assert.equal(cachedPrefixRead(first, changed), 0);
  });
});

describe("renderAnthropic: cacheControl", () => {
  test("without it no block carries cache_control and system stays a string", async () => {
    const thread = await agentThread();
    await thread.append(loopEvents(12));
    const request = await thread.renderAnthropic();
    assert.equal(typeof request.system, "string");
    assert.ok(!JSON.stringify(request).includes("cache_control"));
  });

  // Needs a server with issue 19's options from here on.
  test('"none" is the default: the same request, byte for byte', async () => {
    const thread = await agentThread();
    await thread.append(loopEvents(12));
    assert.equal(JSON.stringify(await thread.renderAnthropic({ cacheControl: "none" })), JSON.stringify(await thread.renderAnthropic()));
  });

  test('"auto": the system prompt becomes text blocks, its last one and the request\'s last block are breakpoints, at most 4', async () => {
    const thread = await agentThread();
    await thread.append(loopEvents(40));
    const request = await thread.renderAnthropic({ cacheControl: "auto" });
    assertValid(request);
    assert.ok(Array.isArray(request.system), `system: ${JSON.stringify(request.system)}`);
    // The blocks are the plain system prompt's parts, in order.
    const plain = String((await thread.renderAnthropic()).system);
    let at = 0;
    for (const block of request.system) {
      const found = plain.indexOf(block.text, at);
      assert.ok(found >= 0 && block.text.trim() !== "", `system block ${JSON.stringify(block.text)} is not the next part of ${JSON.stringify(plain)}`);
      at = found + block.text.length;
    }
    assert.deepEqual(request.system.at(-1)!.cache_control, { type: "ephemeral" });
    assert.deepEqual(request.messages.at(-1)!.content.at(-1)!.cache_control, { type: "ephemeral" });
    const marks = breakpoints(request);
    assert.ok(marks.length >= 2 && marks.length <= ANTHROPIC_MAX_CACHE_BREAKPOINTS, `${marks.length} breakpoints`);
    // The marks apart, the request is the one without them.
    const unmarked = JSON.parse(JSON.stringify(request.messages), (key, value) => (key === "cache_control" ? undefined : value));
    assert.deepEqual(unmarked, (await thread.renderAnthropic()).messages);
  });

  test("{ ttl } puts that TTL on every breakpoint", async () => {
    const thread = await agentThread();
    await thread.append(loopEvents(40));
    for (const ttl of ["5m", "1h"] as const) {
      const request = await thread.renderAnthropic({ cacheControl: { ttl } });
      assertValid(request);
      const marks = breakpoints(request);
      assert.ok(marks.length >= 2);
      assert.ok(marks.every((b) => b.cache_control?.ttl === ttl), JSON.stringify(marks));
    }
  });

  test("each step reads all the step before it cached, a step of many blocks included", async () => {
    const thread = await agentThread();
    await thread.append([{ type: "message", role: "user", content: "Fix the failing test.", iteration: 0 }]);
    let previous = await thread.renderAnthropic({ cacheControl: "auto" });
    for (let step = 1; step <= 12; step++) {
      // Every fourth step reads 15 files at once: 31 blocks, more than Anthropic looks back.
      await thread.append(wideStep(step, step % 4 === 0 ? 15 : 1));
      const next = await thread.renderAnthropic({ cacheControl: "auto" });
      assertValid(next);
      assert.equal(cachedPrefixRead(previous, next), flatten(previous).length, `step ${step} does not read the whole previous request from the cache`);
      previous = next;
    }
  });

  test("with a budget that keeps its cut, each request between cuts reads the whole one before from the cache", async () => {
    const thread = await agentThread();
    const budget = { maxTokens: 1000, dropTo: 500 };
    const all = loopEvents(4 * 40);
    let previous: AnthropicRequest | undefined;
    let previousDropped = 0;
    let reads = 0;
    for (let step = 0; step < 40; step++) {
      await thread.append(all.slice(4 * step, 4 * step + 4));
      const render = await thread.render("anthropic", { cacheControl: "auto", budget });
      assertValid(render);
      const dropped = render.dropped?.iterations.length ?? 0;
      if (previous !== undefined && dropped === previousDropped) {
        assert.equal(cachedPrefixRead(previous, render), flatten(previous).length, `step ${step} does not read the previous request from the cache`);
        reads++;
      }
      previous = render;
      previousDropped = dropped;
    }
    assert.ok(reads > 20, `only ${reads} of 40 steps came between cuts`);
  });

  test("on another format it is refused at options.cacheControl", async () => {
    const thread = await agentThread();
    await thread.append(loopEvents(4));
    await thread.renderAnthropic({ cacheControl: "auto" });
    for (const format of ["ai-sdk", "pydantic-ai", "messages", "xml"] as const) {
      const params = { threadId: thread.id, format, options: { cacheControl: "auto" } };
      const error = await rejectsWithCode(tk.call("thread/render", params), ErrorCodes.InvalidParams);
      assert.equal((error.data as { path?: string }).path, "options.cacheControl", format);
    }
    for (const wrong of ["always", { ttl: "10m" }, { ttl: "5m", extra: 1 }]) {
      const error = await rejectsWithCode(thread.render("anthropic", { cacheControl: wrong } as object), ErrorCodes.InvalidParams);
      assert.match(String((error.data as { path?: string }).path), /^options\.cacheControl/);
    }
  });
});

describe("budget: dropTo", () => {
  test("dropTo above maxTokens is refused at options.budget.dropTo", async () => {
    const thread = await agentThread();
    await thread.append(loopEvents(8));
    await thread.render("messages", { budget: { maxTokens: 500, dropTo: 500 } });
    const error = await rejectsWithCode(thread.render("messages", { budget: { maxTokens: 500, dropTo: 501 } }), ErrorCodes.InvalidParams);
    assert.equal((error.data as { path?: string }).path, "options.budget.dropTo");
  });

  test("the cut stays between cuts: each render extends the one before until the next cut, and a fresh server renders the same", async () => {
    const budget = { maxTokens: 1000, dropTo: 500 };
    const thread = await agentThread();
    const all = loopEvents(4 * 60);
    let previous: OpenAIChatRender | undefined;
    let cuts = 0;
    let kept = 0;
    for (let step = 0; step < 60; step++) {
      await thread.append(all.slice(4 * step, 4 * step + 4));
      const render = await thread.render("openai-chat", { budget });
      const dropped = render.dropped?.iterations ?? [];
      assert.ok(render.tokens! <= budget.maxTokens, `step ${step}: ${render.tokens} tokens`);
      assert.deepEqual(dropped, [...dropped.keys()], `step ${step}: not the oldest iterations: ${dropped}`);
      const before = previous?.dropped?.iterations ?? [];
      if (previous !== undefined && dropped.length === before.length) {
        kept++;
        assert.deepEqual(render.messages.slice(0, previous.messages.length), previous.messages, `step ${step}: not an extension of step ${step - 1}`);
      } else if (dropped.length > before.length) {
        cuts++;
        assert.ok(render.tokens! <= budget.dropTo, `step ${step}: cut to ${render.tokens} tokens, above dropTo`);
      } else {
        assert.equal(dropped.length, before.length, `step ${step}: the cut went back`);
      }
      previous = render;
    }
    assert.ok(cuts >= 2, `${cuts} cuts`);
    assert.ok(kept > 2 * cuts, `the cut moved ${cuts} times in 60 steps: it should stay between cuts`);

    const fresh = await spawnMemory();
    try {
      const whole = await fresh.openThread({ settings: { instructions: "You are a careful coding agent. Read before you write." } });
      await whole.append(all);
      assert.equal(JSON.stringify(await whole.render("openai-chat", { budget })), JSON.stringify({ ...previous, version: 1 }));
    } finally {
      await fresh.close();
    }
  });
});

describe("XML context mode in cacheable blocks", () => {
  test("the Anthropic request's blocks join to the XML render, the closing tag last and unmarked", async () => {
    const thread = await agentThread();
    await thread.append(loopEvents(60));
    const request = await thread.renderAnthropic({ cacheControl: "auto", contextMode: "xml" });
    assertValid(request);
    const blocks = request.messages[0]!.content;
    assert.ok(blocks.length > 2, `${blocks.length} blocks`);
    const text = blocks.map((b) => (b.type === "text" ? b.text : "")).join("");
    assert.equal(text, await thread.renderXml());
    assert.deepEqual(blocks.at(-1), { type: "text", text: "</thread>" });
    assert.ok(breakpoints(request).length <= ANTHROPIC_MAX_CACHE_BREAKPOINTS);
    // Without the option: one block, as before.
    assert.equal((await thread.renderAnthropic({ contextMode: "xml" })).messages[0]!.content.length, 1);
  });
});

describe("renderOpenAIChat / renderOpenAIResponses: cacheControl", () => {
  test('"auto": the thread\'s key, implicit mode, at most 3 explicit breakpoints, none on assistant content', async () => {
    const thread = await agentThread();
    await thread.append(loopEvents(40));
    const chat = await thread.renderOpenAIChat({ cacheControl: "auto" });
    assert.match(chat.prompt_cache_key ?? "", /^tk-[0-9a-f]{32}$/);
    assert.deepEqual(chat.prompt_cache_options, { mode: "implicit" });
    const marked = chat.messages.flatMap((m) =>
      m.role === "assistant" || typeof m.content === "string" ? [] : m.content.filter((p) => p.prompt_cache_breakpoint !== undefined).map(() => m.role),
    );
    assert.deepEqual(marked, ["system", "tool"]);
    const responses = await thread.renderOpenAIResponses({ cacheControl: "auto" });
    assert.equal(responses.instructions, undefined);
    assert.equal(responses.prompt_cache_key, chat.prompt_cache_key);
    assert.deepEqual(responses.input[0], {
      type: "message",
      role: "system",
      content: [{ type: "input_text", text: "You are a careful coding agent. Read before you write.", prompt_cache_breakpoint: { mode: "explicit" } }],
    });
    const other = await (await agentThread()).renderOpenAIChat({ cacheControl: "auto" });
    assert.notEqual(other.prompt_cache_key, chat.prompt_cache_key);
  });

  test('"none" and no option are today\'s request; bad values are refused at their path', async () => {
    const thread = await agentThread();
    await thread.append(loopEvents(8));
    assert.deepEqual(await thread.renderOpenAIChat({ cacheControl: "none" }), await thread.renderOpenAIChat());
    const keyOnly = await thread.renderOpenAIResponses({ cacheControl: { breakpoints: "none", key: "tenant-7" } });
    assert.deepEqual(keyOnly, { ...(await thread.renderOpenAIResponses()), prompt_cache_key: "tenant-7" });
    const ttl = await rejectsWithCode(thread.render("openai-chat", { cacheControl: { ttl: "5m" } } as never), ErrorCodes.InvalidParams);
    assert.match(ttl.message, /options\.cacheControl\.ttl/);
    const key = await rejectsWithCode(thread.render("openai-responses", { cacheControl: { key: "" } }), ErrorCodes.InvalidParams);
    assert.match(key.message, /options\.cacheControl\.key/);
  });
});
