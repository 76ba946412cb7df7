// A fresh fork of a long thread, driven by vscode-jsonrpc (the client VS Code extensions use)
// over both framings: the fork's first request builds the fork's state from the shared events,
// off the server's reader, so a request sent meanwhile is answered first and a cancel for it is
// answered -32800 before a build of the same size is done. Asserted by the order in which the
// answers settle, never by time.

import assert from "node:assert/strict";
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { after, before, describe, test } from "node:test";
import {
  AbstractMessageReader,
  AbstractMessageWriter,
  CancellationTokenSource,
  createMessageConnection,
  ResponseError,
  StreamMessageReader,
  StreamMessageWriter,
  type DataCallback,
  type Disposable,
  type Message,
  type MessageConnection,
  type MessageReader,
  type MessageWriter,
} from "vscode-jsonrpc/node";
import { BINARY, MEMORY_ARGS } from "./helpers.js";

const EVENTS = 500_000;
const EVENTS_PER_APPEND = 50_000;

/** NDJSON framing (one JSON text per line), which vscode-jsonrpc does not ship. */
class NdjsonReader extends AbstractMessageReader implements MessageReader {
  constructor(private readonly input: NodeJS.ReadableStream) {
    super();
  }

  listen(callback: DataCallback): Disposable {
    let pending = "";
    const onData = (chunk: Buffer) => {
      pending += chunk.toString("utf8");
      let newline: number;
      while ((newline = pending.indexOf("\n")) >= 0) {
        const line = pending.slice(0, newline).trim();
        pending = pending.slice(newline + 1);
        if (line) callback(JSON.parse(line) as Message);
      }
    };
    this.input.on("data", onData);
    this.input.on("close", () => this.fireClose());
    return { dispose: () => this.input.off("data", onData) };
  }
}

class NdjsonWriter extends AbstractMessageWriter implements MessageWriter {
  constructor(private readonly output: NodeJS.WritableStream) {
    super();
  }

  write(message: Message): Promise<void> {
    return new Promise((resolve, reject) => this.output.write(JSON.stringify(message) + "\n", (error) => (error ? reject(error) : resolve())));
  }

  end(): void {}
}

type Framing = "lsp" | "ndjson";

interface Connected {
  child: ChildProcessWithoutNullStreams;
  connection: MessageConnection;
}

function connect(framing: Framing): Connected {
  const child = spawn(BINARY, MEMORY_ARGS, { stdio: ["pipe", "pipe", "pipe"] });
  child.stderr.resume();
  // The server picks its framing from the first byte it reads: `{` is NDJSON, a header is LSP.
  const [reader, writer] =
    framing === "lsp"
      ? [new StreamMessageReader(child.stdout), new StreamMessageWriter(child.stdin)]
      : [new NdjsonReader(child.stdout), new NdjsonWriter(child.stdin)];
  const connection = createMessageConnection(reader, writer);
  connection.listen();
  return { child, connection };
}

function userEvents(batch: number): unknown[] {
  return Array.from({ length: EVENTS_PER_APPEND }, (_, i) => ({
    type: "message",
    role: "user",
    content: `message ${batch}-${i}`,
    iteration: Math.floor(i / 100),
  }));
}

/** Settles with the label once `promise` settles, recording the order. */
function track(order: string[], label: string, promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    (value) => {
      order.push(label);
      return value;
    },
    (error: unknown) => {
      order.push(label);
      return error;
    },
  );
}

for (const framing of ["lsp", "ndjson"] as const) {
  describe(`vscode-jsonrpc over ${framing}: a fresh fork of a ${EVENTS}-event thread`, () => {
    let server: Connected;
    let forks = 0;
    const fork = async (): Promise<string> => {
      const threadId = `fork-${forks++}`;
      const info = await server.connection.sendRequest<{ eventCount: number }>("thread/fork", { threadId: "big", newThreadId: threadId });
      assert.equal(info.eventCount, EVENTS);
      return threadId;
    };

    before(async () => {
      server = connect(framing);
      await server.connection.sendRequest("initialize", { clientInfo: { name: "vscode-jsonrpc-fork-test" } });
      await server.connection.sendRequest("thread/open", { threadId: "big" });
      for (let batch = 0; batch < EVENTS / EVENTS_PER_APPEND; batch++) {
        await server.connection.sendRequest("thread/append", { threadId: "big", events: userEvents(batch) });
      }
    });

    after(async () => {
      await server.connection.sendRequest("shutdown");
      server.connection.dispose();
      server.child.kill();
    });

    test("a request sent meanwhile is answered before the fork's first request", async () => {
      const fresh = await fork();
      const order: string[] = [];
      const first = track(order, "first", server.connection.sendRequest("thread/events", { threadId: fresh, tail: 1 }));
      const other = track(order, "other", server.connection.sendRequest("xml/escape", { text: "a<b" }));
      const [firstResult, otherResult] = await Promise.all([first, other]);
      assert.deepEqual(order, ["other", "first"], "the request sent meanwhile waited for the fork's first load");
      assert.equal((firstResult as { eventCount: number }).eventCount, EVENTS);
      assert.deepEqual(otherResult, { text: "a&lt;b" });
    });

    test("a cancel of the fork's first request is answered -32800 before a load of the same size finishes", async () => {
      const kept = await fork();
      const dropped = await fork();
      const order: string[] = [];
      const finishing = track(order, "finishing", server.connection.sendRequest("thread/events", { threadId: kept, tail: 1 }));
      const source = new CancellationTokenSource();
      const cancelled = track(order, "cancelled", server.connection.sendRequest("thread/events", { threadId: dropped, tail: 1 }, source.token));
      source.cancel();
      const [finished, refusal] = await Promise.all([finishing, cancelled]);
      assert.deepEqual(order, ["cancelled", "finishing"], "the cancel waited for the fork's first load");
      assert.ok(refusal instanceof ResponseError, `a cancelled request is refused, got ${JSON.stringify(refusal)}`);
      assert.equal(refusal.code, -32800);
      assert.equal((finished as { eventCount: number }).eventCount, EVENTS);
      // The cancelled load kept nothing half-built.
      const tail = await server.connection.sendRequest<{ version: number; eventCount: number }>("thread/events", { threadId: dropped, tail: 1 });
      assert.deepEqual([tail.version, tail.eventCount], [1, EVENTS]);
    });
  });
}
