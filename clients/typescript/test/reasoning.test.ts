/**
 * Reasoning given back to the provider that produced it, and the gemini and bedrock-converse
 * renders, against the real server (the golden threads of tests/golden/providers).
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import {
  ErrorCodes,
  type AnyAgentEvent,
  type BedrockContentBlock,
  type GeminiPart,
  type ReasoningEvent,
  type Thread,
  type ThreadKeeper,
} from "../src/index.js";
import { rejectsWithCode, repoRoot, spawnMemory } from "./helpers.js";

function goldenEvents(name: string): AnyAgentEvent[] {
  const path = join(repoRoot(), "tests", "golden", "providers", `${name}.events.json`);
  return (JSON.parse(readFileSync(path, "utf8")) as { events: AnyAgentEvent[] }).events;
}

async function threadOf(tk: ThreadKeeper, name: string): Promise<Thread> {
  const thread = await tk.openThread();
  await thread.append(goldenEvents(name));
  return thread;
}

describe("reasoning replay", () => {
  let tk: ThreadKeeper;
  before(async () => {
    tk = await spawnMemory();
  });
  after(async () => {
    await tk.close();
  });

  test("a typed reasoning event is accepted and kept byte for byte", async () => {
    const thread = await tk.openThread();
    const event: ReasoningEvent = { type: "reasoning", iteration: 0, provider: "anthropic", text: "", signature: "sig" };
    await thread.append([{ type: "message", role: "user", content: "hi", iteration: 0 }, event]);
    const events = await thread.events();
    assert.deepEqual(events[1], event);
  });

  test("anthropic: each assistant turn opens with its own thinking, others' left out", async () => {
    const thread = await threadOf(tk, "thinking_tool_loop");
    const request = await thread.renderAnthropic();
    const thinking = request.messages
      .filter((m) => m.role === "assistant")
      .map((m) => m.content.filter((b) => b.type === "thinking" || b.type === "redacted_thinking").length);
    assert.deepEqual(thinking, [2, 2, 1]);
    for (const message of request.messages.filter((m) => m.role === "assistant")) {
      assert.match(message.content[0]!.type, /thinking$/);
    }
    assert.doesNotMatch(JSON.stringify(request), /CiQBGeminiSigAAA|gAAAAABopenai/);
    const none = await thread.renderAnthropic({ reasoning: "none" });
    assert.doesNotMatch(JSON.stringify(none), /thinking/);
    const otherFamily = await thread.renderAnthropic({ model: "gemini-3-pro-preview" });
    assert.doesNotMatch(JSON.stringify(otherFamily), /"thinking"/);
  });

  test("renderGemini: signatures on their parts, placeholders on unsigned first calls", async () => {
    const thread = await threadOf(tk, "gemini_parallel_calls");
    const request = await thread.renderGemini();
    assert.equal(request.systemInstruction, undefined);
    const firstCalls = request.contents
      .filter((c) => c.role === "model")
      .map((c) => c.parts.find((p): p is Extract<GeminiPart, { functionCall: unknown }> => "functionCall" in p))
      .filter((p) => p !== undefined)
      .map((p) => p.thoughtSignature);
    assert.deepEqual(firstCalls, ["CiQBjz1rX0sig1AA", "CiQBjz1rX0sig2AA", "CiQBjz1rX0sig3AA"]);
    const loop = await threadOf(tk, "thinking_tool_loop");
    const placeholders = JSON.stringify(await loop.renderGemini({ thoughtSignaturePlaceholder: "context_engineering_is_the_way_to_go" }));
    assert.equal(placeholders.split("context_engineering_is_the_way_to_go").length - 1, 2);
    await rejectsWithCode(loop.render("gemini", { cacheControl: "auto" } as never), ErrorCodes.InvalidParams);
  });

  test("renderBedrockConverse: alternating roles, signed reasoningContent, cache points", async () => {
    const thread = await threadOf(tk, "bedrock_thinking_tool_loop");
    const request = await thread.renderBedrockConverse({ cacheControl: "auto" });
    request.messages.forEach((m, i) => assert.equal(m.role, i % 2 === 0 ? "user" : "assistant"));
    const reasoning = request.messages.flatMap((m) => m.content).filter((b): b is Extract<BedrockContentBlock, { reasoningContent: unknown }> => "reasoningContent" in b);
    assert.equal(reasoning.length, 5);
    const signed = reasoning.map((b) => ("reasoningText" in b.reasoningContent ? b.reasoningContent.reasoningText.signature : "redacted"));
    assert.deepEqual(signed, ["EqQBCkYIBxgCKkBsig1", "EqQBCkYIBxgCKkBsig2", "redacted", "EqQBCkYIBxgCKkBsig3", "EqQBCkYIBxgCKkBsig4"]);
    const points = JSON.stringify(request).split("cachePoint").length - 1;
    assert.ok(points >= 1 && points <= 4, `${points} cache points`);
  });
});
