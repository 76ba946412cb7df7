/** `search` (`thread/search`) against the real server: typed hits, paging by cursor, filters, errors. */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { ErrorCodes, type AgentEventInput, type SearchHit, type SearchResult, type ThreadKeeper } from "../src/index.js";
import { rejectsWithCode, spawnMemory } from "./helpers.js";

let tk: ThreadKeeper;
before(async () => {
  tk = await spawnMemory();
  const deploy = await tk.openThread({ threadId: "deploy" });
  const events: AgentEventInput[] = [];
  for (let i = 0; i < 30; i++) {
    events.push({ type: "message" as const, role: i % 2 === 0 ? ("user" as const) : ("assistant" as const), content: `step ${i}: deploy the main branch`, iteration: i, timestamp: 1_000 + i });
  }
  events.push({ type: "tool_call" as const, toolName: "run_shell", toolCallId: "c1", args: { command: "git push origin main" }, iteration: 30, timestamp: 2_000 });
  events.push({ type: "tool_result" as const, toolCallId: "c1", result: "error: failed to push some refs", iteration: 30, timestamp: 2_001 });
  await deploy.append(events);
  const other = await tk.openThread({ threadId: "other" });
  await other.append([{ type: "message", role: "user", content: "Deploy to staging, not main", iteration: 0, timestamp: 5_000 }]);
});
after(async () => {
  await tk.close();
});

const place = (hit: SearchHit): string => `${hit.threadId}:${hit.eventIndex}`;

describe("search", () => {
  test("hits are typed, with snippets marking the matches", async () => {
    const result: SearchResult = await tk.search({ query: "push" });
    assert.deepEqual(result.hits.map(place).sort(), ["deploy:30", "deploy:31"]);
    const call = result.hits.find((h) => h.eventIndex === 30)!;
    assert.equal(call.type, "tool_call");
    assert.equal(call.iteration, 30);
    assert.equal(call.role, undefined);
    assert.match(call.snippet, /«push»/);
    assert.ok(result.hits.every((h) => typeof h.score === "number"));
    assert.equal(result.nextCursor, undefined);
    const [message] = (await tk.search({ query: "staging" })).hits;
    assert.equal(message!.role, "user");
    assert.equal(message!.snippet, "Deploy to «staging», not main");
  });

  test("paging by cursor covers every hit once, best first", async () => {
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await tk.search({ query: "deploy main", limit: 7, ...(cursor === undefined ? {} : { cursor }) });
      assert.ok(page.hits.length <= 7);
      const scores = page.hits.map((h) => h.score);
      assert.deepEqual(scores, [...scores].sort((a, b) => b - a));
      seen.push(...page.hits.map(place));
      cursor = page.nextCursor;
      pages++;
    } while (cursor !== undefined);
    assert.equal(pages, 5);
    assert.equal(seen.length, 31);
    assert.equal(new Set(seen).size, 31);
  });

  test("filters: threads, types and time", async () => {
    const inOther = await tk.search({ query: "deploy", threadIds: ["other"] });
    assert.deepEqual(inOther.hits.map(place), ["other:0"]);
    const results = await tk.search({ query: "push", types: ["tool_result"] });
    assert.deepEqual(results.hits.map(place), ["deploy:31"]);
    const window = await tk.search({ query: "deploy", since: 1_010, until: 1_013, limit: 100 });
    assert.deepEqual(window.hits.map(place).sort(), ["deploy:10", "deploy:11", "deploy:12"]);
    const excluded = await tk.search({ query: "deploy -staging", limit: 100 });
    assert.ok(!excluded.hits.some((h) => h.threadId === "other"));
  });

  test("a malformed query, limit or cursor is -32602 naming the field", async () => {
    const quote = await rejectsWithCode(tk.search({ query: '"deploy main' }), ErrorCodes.InvalidParams);
    assert.deepEqual(quote.data, { path: "query", reason: "a quote opened at character 1 is never closed" });
    const nothing = await rejectsWithCode(tk.search({ query: "-deploy" }), ErrorCodes.InvalidParams);
    assert.equal((nothing.data as { path: string }).path, "query");
    const limit = await rejectsWithCode(tk.search({ query: "deploy", limit: 0 }), ErrorCodes.InvalidParams);
    assert.equal((limit.data as { path: string }).path, "limit");
    const cursor = await rejectsWithCode(tk.search({ query: "deploy", cursor: "nope" }), ErrorCodes.InvalidParams);
    assert.equal((cursor.data as { path: string }).path, "cursor");
    // FTS syntax has no meaning: it finds words, or nothing, and never fails the store.
    const syntax = await tk.search({ query: "NEAR(deploy main) ^push:* OR" });
    assert.ok(Array.isArray(syntax.hits));
  });
});
