import assert from "node:assert/strict";
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, test } from "node:test";
import { ErrorCodes, ServerExitedError, ThreadKeeper, type AnyAgentEvent } from "../src/index.js";
import { serializeThreadToXml as referenceXml } from "../bench/reference-serializer.js";
import { loopEvents, rejectsWithCode, spawnMemory, freeze } from "./helpers.js";

describe("concurrency", () => {
  test("500 calls in flight at once each get their own answer", async () => {
    const tk = await spawnMemory();
    try {
      const threads = await Promise.all([0, 1, 2, 3].map((i) => tk.openThread({ threadId: `conc-${i}` })));
      const calls: Promise<void>[] = [];
      for (let i = 0; i < 500; i++) {
        if (i % 5 === 0) {
          const thread = threads[i % 4]!;
          calls.push(thread.append([{ type: "message", role: "user", content: `m${i}`, iteration: i }]).then((r) => assert.equal(r.threadId, thread.id)));
        } else {
          const text = `<${i}> & "${"x".repeat(i)}"`;
          calls.push(tk.escapeXml(text).then((escaped) => assert.equal(escaped, `&lt;${i}&gt; &amp; &quot;${"x".repeat(i)}&quot;`)));
        }
      }
      await Promise.all(calls);
      // Appends to one thread run in the order they were sent.
      for (const [n, thread] of threads.entries()) {
        const contents = (await thread.events()).map((e) => (e as { content: string }).content);
        const sent = [...Array(500).keys()].filter((i) => i % 5 === 0 && i % 4 === n).map((i) => `m${i}`);
        assert.deepEqual(contents, sent);
        assert.equal((await thread.eventsPage()).version, sent.length);
      }
    } finally {
      await tk.close();
    }
  });

  test("concurrent expectedVersion appends: exactly one wins", async () => {
    const tk = await spawnMemory();
    try {
      const thread = await tk.openThread();
      const results = await Promise.allSettled(
        [...Array(10).keys()].map((i) => thread.append([{ type: "message", role: "user", content: `${i}`, iteration: 0 }], { expectedVersion: 0 })),
      );
      assert.equal(results.filter((r) => r.status === "fulfilled").length, 1);
      for (const r of results) if (r.status === "rejected") assert.equal(r.reason.code, ErrorCodes.VersionConflict);
    } finally {
      await tk.close();
    }
  });
});

describe("cancellation", () => {
  test("aborting a call sends $/cancelRequest; the connection goes on", async () => {
    const tk = await spawnMemory();
    try {
      const thread = await tk.openThread();
      await thread.append(loopEvents(4000));
      const controller = new AbortController();
      const call = tk.call<{ text: string }>("thread/render", { threadId: thread.id, format: "xml" }, { signal: controller.signal });
      controller.abort();
      // Either the server stopped it (-32800) or it had already finished: both are correct.
      await call.then(
        (result) => assert.match(result.text, /^<thread>/),
        (error) => assert.equal(error.code, ErrorCodes.Cancelled),
      );
      await rejectsWithCode(tk.call("xml/escape", { text: "x" }, { signal: AbortSignal.abort() }), ErrorCodes.Cancelled);
      assert.equal(await tk.escapeXml("<"), "&lt;");
      assert.equal((await thread.eventsPage()).eventCount, 4000);
    } finally {
      await tk.close();
    }
  });
});

describe("server death", () => {
  test("killing the server mid-call rejects every pending call at once, and later calls too", async () => {
    const tk = await spawnMemory();
    const thread = await tk.openThread();
    await thread.append(loopEvents(2000));
    // Freeze the server so the calls below are surely in flight, then kill it.
    await freeze(tk.pid!);
    const pending = [thread.renderXml(), tk.escapeXml("x"), thread.append(loopEvents(4)), tk.listThreads(), thread.events()];
    const settled = Promise.allSettled(pending);
    await new Promise((r) => setTimeout(r, 50));
    const killedAt = Date.now();
    process.kill(tk.pid!, "SIGKILL");
    const results = await settled;
    assert.ok(Date.now() - killedAt < 2000, "rejected promptly");
    for (const r of results) {
      assert.equal(r.status, "rejected");
      const reason = (r as PromiseRejectedResult).reason;
      assert.ok(reason instanceof ServerExitedError, String(reason));
      assert.equal(reason.signal, "SIGKILL");
      assert.match(reason.message, /killed by SIGKILL/);
    }
    await rejectsWithCode(tk.escapeXml("after"), ErrorCodes.ServerExited);
    assert.deepEqual(await tk.exited, { exitCode: null, signal: "SIGKILL" });
    assert.deepEqual(await tk.close(), { exitCode: null, signal: "SIGKILL" });
  });

  test("a server that crashes after initialize reports its status and stderr tail", async () => {
    const dir = mkdtempSync(join(tmpdir(), "tk-crash-"));
    try {
      // Answers initialize, then dies on the next message, as a crash would.
      const script = join(dir, "crashing-server");
      writeFileSync(
        script,
        `#!/usr/bin/env node
let buf = Buffer.alloc(0); let seen = 0;
process.stdin.on("data", (d) => {
  buf = Buffer.concat([buf, d]);
  for (;;) {
    const end = buf.indexOf("\\r\\n\\r\\n"); if (end < 0) return;
    const len = Number(/Content-Length: (\\d+)/i.exec(buf.subarray(0, end).toString())[1]);
    if (buf.length < end + 4 + len) return;
    const msg = JSON.parse(buf.subarray(end + 4, end + 4 + len).toString()); buf = buf.subarray(end + 4 + len);
    if (seen++ === 0) {
      const body = JSON.stringify({ jsonrpc: "2.0", id: msg.id, result: { serverInfo: { name: "threadkeeper", version: "0" }, protocolVersion: 1, capabilities: { renderFormats: [], store: { kind: "memory" } } } });
      process.stdout.write("Content-Length: " + Buffer.byteLength(body) + "\\r\\n\\r\\n" + body);
    } else {
      process.stderr.write("x".repeat(20000) + "\\npanicked at src/render.rs:12: boom\\n");
      process.exit(101);
    }
  }
});
`,
      );
      chmodSync(script, 0o755);
      const tk = await ThreadKeeper.spawn({ binary: script });
      const error = await rejectsWithCode(tk.escapeXml("x"), ErrorCodes.ServerExited);
      assert.ok(error instanceof ServerExitedError);
      assert.equal(error.exitCode, 101);
      assert.match(error.stderr, /panicked at src\/render.rs:12: boom$/);
      assert.ok(error.stderr.length <= 8 * 1024, "only the tail is kept");
      assert.match(error.message, /exited with status 101/);
      assert.match(error.message, /boom/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("large threads", () => {
  test("10k events: one append, exact XML, events back unchanged, paging", async () => {
    const tk = await spawnMemory();
    try {
      const events: AnyAgentEvent[] = loopEvents(10_000);
      const thread = await tk.openThread({ settings: { responsePrefix: "Next step:" } });
      assert.deepEqual(await thread.append(events), { threadId: thread.id, version: 1, eventCount: 10_000 });
      const xml = await thread.renderXml();
      assert.equal(xml, referenceXml(events, { responsePrefix: "Next step:" }));
      assert.deepEqual(await thread.events(), events);
      assert.deepEqual(await thread.events({ offset: 9_990, limit: 5 }), events.slice(9_990, 9_995));
      // Incremental appends on top keep the document equal to a full re-serialization.
      const more = loopEvents(8, 10_000);
      await thread.append(more);
      assert.equal(await thread.renderXml({ responsePrefix: "" }), referenceXml([...events, ...more]));
    } finally {
      await tk.close();
    }
  });

  test("a 5 MB string survives the round trip", async () => {
    const tk = await spawnMemory();
    try {
      const big = "é<&>".repeat(1_250_000);
      assert.equal(await tk.escapeXml(big), "é&lt;&amp;&gt;".repeat(1_250_000));
    } finally {
      await tk.close();
    }
  });

  test("a frame over the server's limit is -32004 and the connection goes on", async () => {
    const tk = await spawnMemory(["--max-frame-bytes", "100000"]);
    try {
      // The server cannot know the id of a frame it refused to read: it answers with id null,
      // which no pending call can match. The client must not hang on it forever: it stays usable.
      const error = await rejectsWithCode(tk.openThread({ threadId: "big" }).then((t) => t.append(loopEvents(2000))), ErrorCodes.LimitExceeded);
      assert.equal((error.data as { limit: string }).limit, "maxFrameBytes");
      assert.equal(await tk.escapeXml("<"), "&lt;");
    } finally {
      await tk.close();
    }
  });
});
