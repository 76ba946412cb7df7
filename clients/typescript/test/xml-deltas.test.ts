import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { ErrorCodes, type AnyAgentEvent, type EscapeMode, type ThreadKeeper } from "../src/index.js";
import { loopEvents, rejectsWithCode, SAMPLE_XML, sampleEvents, spawnMemory } from "./helpers.js";

/** The event lines of SAMPLE_XML, each with its newline. */
const SAMPLE_LINES = SAMPLE_XML.split("\n")
  .slice(1, -1)
  .map((line) => `${line}\n`);

let tk: ThreadKeeper;
before(async () => {
  tk = await spawnMemory();
});
after(async () => {
  await tk.close();
});

/** Records the params of every `thread/render` the client sends. */
function recordRenders(client: ThreadKeeper): { params: Record<string, unknown>[]; restore(): void } {
  const params: Record<string, unknown>[] = [];
  const original = client.call.bind(client);
  const spied = (method: string, p?: object, options?: { signal?: AbortSignal }) => {
    if (method === "thread/render") params.push(p as Record<string, unknown>);
    return original(method, p, options);
  };
  (client as { call: unknown }).call = spied;
  return { params, restore: () => ((client as { call: unknown }).call = original) };
}

describe("XML deltas: renderXmlDelta", () => {
  test("answers the lines of the events from fromEvent on, and the tail", async () => {
    const thread = await tk.openThread({ settings: { responsePrefix: "Go:" } });
    await thread.append(sampleEvents());
    assert.deepEqual(await thread.renderXmlDelta(0), {
      format: "xml",
      version: 1,
      eventCount: 5,
      fromEvent: 0,
      lines: SAMPLE_LINES.join(""),
      tail: "</thread>\nGo:",
    });
    assert.deepEqual(await thread.renderXmlDelta(3, { responsePrefix: "" }), {
      format: "xml",
      version: 1,
      eventCount: 5,
      fromEvent: 3,
      lines: SAMPLE_LINES.slice(3).join(""),
      tail: "</thread>",
    });
    const none = await thread.renderXmlDelta(5);
    assert.equal(none.lines, "");
    assert.equal(`<thread>\n${SAMPLE_LINES.join("")}${none.tail}`, await thread.renderXml());
    const minimal = await thread.renderXmlDelta(1, { escape: "minimal" });
    assert.equal(minimal.lines.split("\n")[0], '  <event type="tool_input" id="1" name="calculator" iteration="1">{"expression":"2+2"}</event>');
  });

  test("fromEvent past the thread's events is -32602 naming options.fromEvent", async () => {
    const thread = await tk.openThread();
    await thread.append(sampleEvents());
    const error = await rejectsWithCode(thread.renderXmlDelta(6), ErrorCodes.InvalidParams);
    assert.equal((error.data as { path: string }).path, "options.fromEvent");
  });

  test("an empty thread: no lines", async () => {
    const thread = await tk.openThread();
    assert.deepEqual(await thread.renderXmlDelta(0), { format: "xml", version: 0, eventCount: 0, fromEvent: 0, lines: "", tail: "</thread>" });
    assert.equal(await thread.renderXml({ incremental: true }), "<thread>\n</thread>");
  });
});

describe("XML deltas: renderXml({ incremental: true })", () => {
  test("equals the full render at every step of a 200-step loop, in both escape modes", async () => {
    const thread = await tk.openThread({ settings: { responsePrefix: "Next:" } });
    const events = loopEvents(1000);
    let sent = 0;
    for (let step = 0; step < 200; step++) {
      // 0 to 8 events per step: some steps append nothing.
      const n = (step * 7) % 9;
      if (n > 0) await thread.append(events.slice(sent, sent + n));
      sent += n;
      const escape: EscapeMode = step % 3 === 2 ? "minimal" : "full";
      const responsePrefix = step % 5 === 4 ? "" : undefined;
      const incremental = await thread.renderXml({ incremental: true, escape, responsePrefix });
      const full = await thread.renderXml({ escape, responsePrefix });
      assert.equal(incremental, full, `step ${step} (${sent} events, escape ${escape})`);
    }
    assert.ok(sent > 700, `${sent} events`);
  });

  test("an append and an incremental render sent together: the render sees the append", async () => {
    const thread = await tk.openThread();
    const events = loopEvents(400);
    for (let step = 0; step < 100; step++) {
      const batch = events.slice(step * 4, step * 4 + 4);
      const [, incremental] = await Promise.all([thread.append(batch), thread.renderXml({ incremental: true })]);
      assert.equal(incremental, await thread.renderXml(), `step ${step}`);
      assert.ok(incremental.includes(` id="${step * 4 + 3}" `), `step ${step} shows the events it appended`);
    }
  });

  test("asks only for the events it has not received, per escape mode", async () => {
    const thread = await tk.openThread();
    const spy = recordRenders(tk);
    try {
      await thread.append(loopEvents(4));
      await thread.renderXml({ incremental: true });
      await thread.append(loopEvents(4, 4));
      await thread.renderXml({ incremental: true });
      await thread.renderXml({ incremental: true, escape: "minimal" });
      await thread.renderXml({ incremental: true });
      assert.deepEqual(
        spy.params.map((p) => p.options),
        [{ fromEvent: 0 }, { fromEvent: 4 }, { escape: "minimal", fromEvent: 0 }, { fromEvent: 8 }],
      );
    } finally {
      spy.restore();
    }
  });

  test("renders started together each extend the kept lines once", async () => {
    const thread = await tk.openThread();
    await thread.append(loopEvents(6));
    const doc6 = await tk.serializeThreadToXml(loopEvents(6));
    const doc12 = await tk.serializeThreadToXml(loopEvents(12));
    const together = await Promise.all([thread.renderXml({ incremental: true }), thread.renderXml({ incremental: true }), thread.renderXml({ incremental: true, escape: "minimal" })]);
    assert.deepEqual(together, [doc6, doc6, await tk.serializeThreadToXml(loopEvents(6), { escape: "minimal" })]);
    // An append sent while a render waits: that render sees it or not, the next one surely does.
    const [first, , second] = await Promise.all([thread.renderXml({ incremental: true }), thread.append(loopEvents(6, 6)), thread.renderXml({ incremental: true })]);
    assert.ok(first === doc6 || first === doc12, "the first render is the document before or after the append");
    assert.equal(second, doc12);
    assert.equal(await thread.renderXml({ incremental: true }), doc12);
  });

  test("a thread recreated with fewer events: the delta is refused, the object starts over", async () => {
    const thread = await tk.openThread({ threadId: "recreated-fewer" });
    await thread.append(loopEvents(8));
    await thread.renderXml({ incremental: true });
    // Deleted and recreated behind this object's back.
    await tk.deleteThread(thread.id);
    const again = await tk.openThread({ threadId: thread.id });
    const fresh: AnyAgentEvent[] = sampleEvents().slice(0, 3);
    await again.append(fresh);
    const spy = recordRenders(tk);
    try {
      assert.equal(await thread.renderXml({ incremental: true }), await tk.serializeThreadToXml(fresh));
      assert.deepEqual(spy.params.map((p) => p.options), [{ fromEvent: 8 }, { fromEvent: 0 }]);
    } finally {
      spy.restore();
    }
    await again.append(sampleEvents().slice(3));
    assert.equal(await thread.renderXml({ incremental: true }), SAMPLE_XML);
  });

  test("a thread recreated at a lower version: the object starts over", async () => {
    const thread = await tk.openThread({ threadId: "recreated-lower-version" });
    for (let i = 0; i < 3; i++) await thread.append(loopEvents(1, i));
    await thread.renderXml({ incremental: true });
    await tk.deleteThread(thread.id);
    const again = await tk.openThread({ threadId: thread.id });
    await again.append(sampleEvents()); // version 1, 5 events: fromEvent 3 is accepted
    assert.equal(await thread.renderXml({ incremental: true }), SAMPLE_XML);
  });

  test("delete through the object forgets the kept lines; other errors pass through", async () => {
    const thread = await tk.openThread({ threadId: "deleted-then-reopened" });
    await thread.append(loopEvents(8));
    await thread.renderXml({ incremental: true });
    await thread.delete();
    await rejectsWithCode(thread.renderXml({ incremental: true }), ErrorCodes.ThreadNotFound);
    await tk.openThread({ threadId: thread.id });
    await thread.append(sampleEvents());
    assert.equal(await thread.renderXml({ incremental: true }), SAMPLE_XML);
    await rejectsWithCode(thread.renderXml({ incremental: true, escape: "none" as EscapeMode }), ErrorCodes.InvalidParams);
  });
});

describe("thread.step: append and render in one round trip", () => {
  test("answers the append and the document after it, at every step of a 200-step loop", async () => {
    const thread = await tk.openThread();
    const events = loopEvents(800);
    for (let step = 0; step < 200; step++) {
      const { appended, xml } = await thread.step(events.slice(step * 4, step * 4 + 4));
      assert.deepEqual(appended, { threadId: thread.id, version: step + 1, eventCount: (step + 1) * 4 });
      assert.equal(xml, await thread.renderXml(), `step ${step}`);
    }
    assert.equal(thread.info.eventCount, 800);
  });

  test("takes the render's options; incremental: false renders the whole document", async () => {
    const thread = await tk.openThread();
    const minimal = await thread.step(loopEvents(4), { escape: "minimal", responsePrefix: "<ai>" });
    assert.equal(minimal.xml, await tk.serializeThreadToXml(loopEvents(4), { escape: "minimal", responsePrefix: "<ai>" }));
    const spy = recordRenders(tk);
    try {
      const whole = await thread.step(loopEvents(4, 4), { incremental: false });
      assert.equal(whole.xml, await tk.serializeThreadToXml(loopEvents(8)));
      assert.deepEqual(spy.params.map((p) => p.options), [undefined]);
    } finally {
      spy.restore();
    }
  });

  test("a refused append rejects the step with its error, and the thread is unchanged", async () => {
    const thread = await tk.openThread();
    await thread.step(loopEvents(4));
    await rejectsWithCode(thread.step(loopEvents(4, 4), { expectedVersion: 7 }), ErrorCodes.VersionConflict);
    assert.equal((await thread.step(loopEvents(4, 4), { expectedVersion: 1 })).xml, await tk.serializeThreadToXml(loopEvents(8)));
  });
});
