import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { ErrorCodes, unknownEvent, type AgentEvent, type AnyAgentEvent, type ThreadKeeper, type WithExtraFields } from "../src/index.js";
import { rejectsWithCode, SAMPLE_XML, sampleEvents, spawnMemory } from "./helpers.js";

/** A known event with fields of the caller's own, written on purpose. */
const withExtras = (event: WithExtraFields<AgentEvent>): AnyAgentEvent => event;

describe("threads", () => {
  let tk: ThreadKeeper;
  before(async () => {
    tk = await spawnMemory();
  });
  after(async () => {
    await tk.close();
  });

  test("openThread without an id makes a new thread at version 0", async () => {
    const thread = await tk.openThread();
    assert.match(thread.id, /^[A-Za-z0-9._:-]{1,128}$/);
    assert.equal(thread.info.threadId, thread.id);
    assert.equal(thread.info.version, 0);
    assert.equal(thread.info.eventCount, 0);
    assert.deepEqual(thread.info.settings, {});
    assert.deepEqual(thread.info.metadata, {});
    assert.equal(typeof thread.info.createdAt, "number");
    assert.ok(thread.info.updatedAt >= thread.info.createdAt);
    const other = await tk.openThread();
    assert.notEqual(other.id, thread.id);
  });

  test("openThread with an id keeps the thread; given settings and metadata replace the stored ones", async () => {
    const first = await tk.openThread({ threadId: "reopen-1", settings: { contextMode: "xml", responsePrefix: "Go:" }, metadata: { user: "ann" } });
    assert.deepEqual(first.info.settings, { contextMode: "xml", responsePrefix: "Go:" });
    assert.deepEqual(first.info.metadata, { user: "ann" });
    await first.append(sampleEvents().slice(0, 1));
    const again = await tk.openThread({ threadId: "reopen-1", metadata: { user: "bob", n: 2 } });
    assert.equal(again.info.eventCount, 1);
    assert.equal(again.info.version, 1);
    assert.deepEqual(again.info.settings, { contextMode: "xml", responsePrefix: "Go:" }, "settings not given are kept");
    assert.deepEqual(again.info.metadata, { user: "bob", n: 2 });
    const replaced = await tk.openThread({ threadId: "reopen-1", settings: { instructions: "Be brief." } });
    assert.deepEqual(replaced.info.settings, { instructions: "Be brief." });
  });

  test("invalid thread ids and settings are -32602", async () => {
    await rejectsWithCode(tk.openThread({ threadId: "has space" }), ErrorCodes.InvalidParams);
    await rejectsWithCode(tk.openThread({ threadId: "x".repeat(129) }), ErrorCodes.InvalidParams);
    await rejectsWithCode(tk.openThread({ threadId: "" }), ErrorCodes.InvalidParams);
    const error = await rejectsWithCode(tk.openThread({ settings: { contextMode: "json" as "xml" } }), ErrorCodes.InvalidParams);
    assert.match(JSON.stringify(error.data), /contextMode/);
  });

  test("append counts versions and events; renderXml gives the seed document", async () => {
    const thread = await tk.openThread();
    const events = sampleEvents();
    assert.deepEqual(await thread.append(events.slice(0, 2)), { threadId: thread.id, version: 1, eventCount: 2 });
    assert.deepEqual(await thread.append(events.slice(2)), { threadId: thread.id, version: 2, eventCount: 5 });
    assert.equal(thread.info.version, 2);
    assert.equal(await thread.renderXml(), SAMPLE_XML);
    const full = await thread.render("xml");
    assert.deepEqual(full, { format: "xml", version: 2, text: SAMPLE_XML });
  });

  test("response prefix: setting, then option overriding it", async () => {
    const thread = await tk.openThread({ settings: { responsePrefix: "Based on the above thread, I will now" } });
    await thread.append(sampleEvents());
    assert.equal(await thread.renderXml(), `${SAMPLE_XML}\nBased on the above thread, I will now`);
    assert.equal(await thread.renderXml({ responsePrefix: "Next:" }), `${SAMPLE_XML}\nNext:`);
    const empty = await tk.openThread();
    assert.equal(await empty.renderXml(), "<thread>\n</thread>");
  });

  test("escape minimal leaves quotes in bodies but not in attributes", async () => {
    const thread = await tk.openThread();
    await thread.append([{ type: "tool_call", toolName: 'say "hi"', toolCallId: "q", args: { text: "it's <ok>" }, iteration: 2 }]);
    const line = (xml: string) => xml.split("\n")[1];
    assert.equal(line(await thread.renderXml({ escape: "minimal" })), `  <event type="tool_input" id="0" name="say &quot;hi&quot;" iteration="2">{"text":"it's &lt;ok&gt;"}</event>`);
    assert.equal(
      line(await thread.renderXml()),
      `  <event type="tool_input" id="0" name="say &quot;hi&quot;" iteration="2">{&quot;text&quot;:&quot;it&apos;s &lt;ok&gt;&quot;}</event>`,
    );
  });

  test("events come back exactly as appended: unknown types, extra fields, key order", async () => {
    const thread = await tk.openThread();
    const events: AnyAgentEvent[] = [
      withExtras({ iteration: 3, type: "message", content: "keys out of order", role: "user", extra: { nested: [1, 2.5, "x"] } }),
      unknownEvent({ type: "approval", iteration: 4, decision: "granted", by: { name: "ann" }, timestamp: 5 }),
      withExtras({ type: "tool_result", toolCallId: "none", result: { ok: true, list: [null, "é", "\u{1F600}"] }, iteration: 4, durationMs: 12 }),
      // Looks like a JSON-RPC response inside the data: must come back as data.
      unknownEvent({ type: "rpc_log", iteration: 5, jsonrpc: "2.0", id: 1, result: { error: { code: -1 } } }),
    ];
    await thread.append(events);
    // A known type is refused at run time too (its fields would go unchecked).
    assert.throws(() => unknownEvent({ type: "tool_call" as string as "x", iteration: 0 }), /"tool_call" is a known event type/);
    const back = await thread.events();
    assert.deepEqual(back, events);
    assert.deepEqual(back.map((e) => Object.keys(e)), events.map((e) => Object.keys(e)), "same key order");
    const page = await thread.eventsPage({ offset: 1, limit: 1 });
    assert.deepEqual(page, { version: 1, eventCount: 4, events: [events[1]] });
    assert.deepEqual(await thread.events({ offset: 2 }), events.slice(2));
    assert.deepEqual(await thread.events({ offset: 10 }), []);
  });

  test("a bad event rejects the whole append with -32602 naming the field; nothing is stored", async () => {
    const thread = await tk.openThread();
    await thread.append(sampleEvents().slice(0, 1));
    const bad = [...sampleEvents().slice(1, 3), { type: "tool_call", toolName: "x", args: {}, iteration: 1 }] as AnyAgentEvent[];
    const error = await rejectsWithCode(thread.append(bad), ErrorCodes.InvalidParams);
    assert.deepEqual((error.data as { path: string }).path, "events[2].toolCallId");
    assert.match(error.message, /events\[2\]\.toolCallId/);
    const page = await thread.eventsPage();
    assert.equal(page.eventCount, 1);
    assert.equal(page.version, 1);
    const noIteration = await rejectsWithCode(thread.append([{ type: "message", role: "user", content: "x" } as unknown as AnyAgentEvent]), ErrorCodes.InvalidParams);
    assert.equal((noIteration.data as { path: string }).path, "events[0].iteration");
  });

  test("expectedVersion: a stale version is -32003 with the current version", async () => {
    const thread = await tk.openThread();
    await thread.append(sampleEvents().slice(0, 1), { expectedVersion: 0 });
    await thread.append(sampleEvents().slice(1, 2), { expectedVersion: 1 });
    const error = await rejectsWithCode(thread.append(sampleEvents().slice(2), { expectedVersion: 1 }), ErrorCodes.VersionConflict);
    assert.deepEqual(error.data, { threadId: thread.id, currentVersion: 2 });
    assert.equal((await thread.eventsPage()).eventCount, 2);
  });

  test("unknown threads are -32001 with the thread id", async () => {
    const ghost = await tk.openThread({ threadId: "ghost-1" });
    await ghost.delete();
    for (const call of [() => ghost.renderXml(), () => ghost.append(sampleEvents()), () => ghost.events(), () => ghost.close()]) {
      const error = await rejectsWithCode(call(), ErrorCodes.ThreadNotFound);
      assert.deepEqual(error.data, { threadId: "ghost-1" });
    }
  });

  test("listThreads, close (memory store discards), delete", async () => {
    const solo = await spawnMemory();
    try {
      const a = await solo.openThread({ threadId: "a", metadata: { k: 1 } });
      const b = await solo.openThread({ threadId: "b" });
      await a.append(sampleEvents());
      const listed = await solo.listThreads();
      assert.deepEqual(listed.map((t) => t.threadId).sort(), ["a", "b"]);
      const infoA = listed.find((t) => t.threadId === "a")!;
      assert.equal(infoA.eventCount, 5);
      assert.equal(infoA.version, 1);
      assert.deepEqual(infoA.metadata, { k: 1 });

      await b.close();
      assert.deepEqual((await solo.listThreads()).map((t) => t.threadId), ["a"]);
      await rejectsWithCode(b.renderXml(), ErrorCodes.ThreadNotFound);

      assert.equal(await a.delete(), true);
      assert.equal(await a.delete(), false);
      assert.equal(await solo.deleteThread("never-was"), false);
      assert.deepEqual(await solo.listThreads(), []);
    } finally {
      await solo.close();
    }
  });
});
