/** Typed methods for tokens, compaction, undo and branching, against the real server. */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { ErrorCodes, type ThreadKeeper } from "../src/index.js";
import { loopEvents, rejectsWithCode, spawnMemory } from "./helpers.js";

let tk: ThreadKeeper;
before(async () => {
  tk = await spawnMemory();
});
after(async () => {
  await tk.close();
});

describe("tokens and compaction", () => {
  test("tokens counts the render, per iteration", async () => {
    const thread = await tk.openThread();
    await thread.append(loopEvents(40));
    const count = await thread.tokens();
    assert.equal(count.tokenizer, "estimate");
    assert.deepEqual(count.byIteration.map((i) => i.iteration), [...Array(10).keys()]);
    assert.ok(count.tokens > 0 && count.byIteration.every((i) => i.tokens > 0));
    const xml = await thread.tokens({ format: "xml", tokenizer: "o200k_base" });
    assert.equal(xml.tokenizer, "o200k_base");
    assert.ok(xml.tokens > 0);
    await rejectsWithCode(thread.tokens({ tokenizer: "gpt2" as "estimate" }), ErrorCodes.InvalidParams);
  });

  test("a render with a budget drops the oldest iterations and says which", async () => {
    const thread = await tk.openThread();
    await thread.append(loopEvents(40));
    const full = await thread.tokens();
    const render = await thread.render("messages", { budget: { maxTokens: Math.floor(full.tokens / 2) } });
    assert.ok(render.dropped !== undefined && render.dropped.iterations.length > 0);
    assert.equal(render.dropped.iterations[0], 0);
    assert.ok(render.tokens! <= full.tokens / 2);
  });

  test("planCompaction, then compact with the summaries", async () => {
    const thread = await tk.openThread();
    await thread.append(loopEvents(40));
    const total = (await thread.tokens()).tokens;
    assert.equal((await thread.planCompaction()).needed, false);
    const plan = await thread.planCompaction({ maxContextTokens: Math.floor(total / 2), keepRecentIterations: 2 });
    assert.equal(plan.needed, true);
    assert.ok(plan.iterations.length > 0 && plan.iterations.every((i) => i.iteration < 8 && i.prompt.length > 0));
    const summaries = plan.iterations.map(({ iteration }) => ({ iteration, summary: `Step ${iteration} done.` }));
    const result = await thread.compact(summaries, { keepRecentIterations: 2 });
    assert.equal(result.threadId, thread.id);
    assert.equal(thread.info.version, result.version);
    assert.ok((await thread.tokens()).tokens < total);
  });

  test("rolling compaction: plan, summarize, plan again; the summary follows the instructions", async () => {
    const thread = await tk.openThread({ settings: { instructions: "Be brief." } });
    await thread.append(loopEvents(40));
    const total = (await thread.tokens({ tokenizer: "o200k_base" })).tokens;
    const budget = { maxTokens: Math.floor(total / 2), compactTo: Math.floor(total / 3), tokenizer: "o200k_base" } as const;
    const plan = await thread.planRollingCompaction(budget);
    assert.equal(plan.strategy, "rolling");
    assert.equal(plan.needed, true);
    assert.equal(plan.version, thread.info.version);
    const step = plan.step!;
    assert.equal(step.kind, "summarize");
    if (step.kind !== "summarize") return;
    assert.equal(step.iterations[0], 0);
    assert.match(step.prompt, /^You are compacting the history/);
    const result = await thread.compactRolling(step, "Steps so far: read & edited <files>.");
    assert.equal(result.round, 1);
    assert.equal(thread.info.version, result.version);
    const after = await thread.planRollingCompaction(budget);
    assert.equal(after.needed, false);
    assert.equal(after.step, undefined);
    const { messages } = await thread.renderOpenAIChat();
    assert.deepEqual(messages.slice(0, 2), [
      { role: "system", content: "Be brief." },
      { role: "user", content: `[Summary of iterations 0 to ${step.iterations[1]}]: Steps so far: read & edited <files>.` },
    ]);
    // A round planned on another version is a conflict; an empty summary is refused.
    await rejectsWithCode(thread.compactRolling(step, "again"), ErrorCodes.VersionConflict);
    await rejectsWithCode(
      thread.compactRolling({ kind: "summarize", iterations: step.iterations }, ""),
      ErrorCodes.InvalidParams,
    );
  });
});

describe("undo and branching", () => {
  test("pop removes the last events and answers them in thread order", async () => {
    const thread = await tk.openThread();
    const events = loopEvents(8);
    await thread.append(events);
    const popped = await thread.pop({ count: 3 });
    assert.deepEqual(popped.events, events.slice(5));
    assert.deepEqual(await thread.events(), events.slice(0, 5));
    assert.equal(thread.info.version, popped.version);
    assert.deepEqual((await thread.pop()).events, [events[4]]);
    await rejectsWithCode(thread.pop({ expectedVersion: 0 }), ErrorCodes.VersionConflict);
  });

  test("events({ tail }) gives the last events", async () => {
    const thread = await tk.openThread();
    const events = loopEvents(10);
    await thread.append(events);
    assert.deepEqual(await thread.events({ tail: 3 }), events.slice(7));
    assert.deepEqual(await thread.events({ tail: 30 }), events);
  });

  test("fork copies a prefix into a new thread; the original is untouched", async () => {
    const thread = await tk.openThread({ metadata: { who: "ann" } });
    const events = loopEvents(8);
    await thread.append(events.slice(0, 4));
    await thread.append(events.slice(4));
    const atEvent = await thread.fork({ atEvent: 2, newThreadId: `${thread.id}-b` });
    assert.equal(atEvent.id, `${thread.id}-b`);
    assert.deepEqual(await atEvent.events(), events.slice(0, 2));
    const atVersion = await thread.fork({ atVersion: 1 });
    assert.notEqual(atVersion.id, thread.id);
    assert.deepEqual(await atVersion.events(), events.slice(0, 4));
    assert.deepEqual(await (await thread.fork()).events(), events);
    assert.deepEqual(await thread.events(), events);
  });
});

describe("CLI prompts", () => {
  const tools = [{ name: "calculator", description: "Evaluates an expression.", parameters: { type: "object", properties: { expression: { type: "string" } } } }];

  test("promptCli for a thread and for messages; parseReply gives events to append", async () => {
    const thread = await tk.openThread({ settings: { instructions: "Be brief." } });
    await thread.append(loopEvents(4));
    const prompt = await thread.promptCli({ tools, inputEncoding: "xml" });
    assert.match(prompt, /calculator/);
    assert.match(prompt, /Be brief\./);
    assert.equal(await tk.promptCli(await thread.renderMessages(), { tools, inputEncoding: "xml" }), prompt);

    const reply = await tk.parseReply('Let me compute.\n```json\n{"tool_calls": [{"name": "calculator", "args": {"expression": "6*7"}, "id": "c9"}]}\n```', 5);
    assert.equal(reply.content, "Let me compute.");
    assert.deepEqual(reply.toolCalls, [{ id: "c9", name: "calculator", args: { expression: "6*7" } }]);
    assert.deepEqual(
      reply.events.map((e) => [e.type, e.iteration]),
      [["message", 5], ["tool_call", 5]],
    );
    await thread.append(reply.events);
    assert.equal((await thread.events({ tail: 1 }))[0]!.type, "tool_call");
  });
});

describe("view", () => {
  test("view answers the thread as one self-contained page, hostile text escaped", async () => {
    const thread = await tk.openThread();
    await thread.append([
      ...loopEvents(4),
      { type: "message", role: "user", content: "</script><script>window.__pwned=1</script>", iteration: 9 },
    ]);
    const html = await thread.view({ contextMode: "xml" });
    assert.ok(html.startsWith("<!DOCTYPE html>") || html.startsWith("<!doctype html>"), html.slice(0, 40));
    assert.ok(!html.includes("</script><script>window.__pwned"), "thread text never closes the data block");
    await rejectsWithCode(thread.view({ fromEvent: 1 } as never), ErrorCodes.InvalidParams);
  });
});
