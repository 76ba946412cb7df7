import assert from "node:assert/strict";
import { PassThrough } from "node:stream";
import { describe, test } from "node:test";
import { Connection, requestJson } from "../src/connection.js";
import { encodeFrame } from "../src/framing.js";

/** A connection over in-memory streams, with every write it makes recorded as one string. */
function recorded(): { connection: Connection; writes: string[]; answer(message: object): void } {
  const input = new PassThrough();
  const output = new PassThrough();
  const writes: string[] = [];
  output.on("data", (chunk: Buffer) => writes.push(chunk.toString("utf8")));
  const connection = new Connection(input, output, { onBusy: () => {}, onStray: () => {} });
  return { connection, writes, answer: (message) => input.write(encodeFrame(JSON.stringify(message))) };
}

const frame = (message: object) => encodeFrame(JSON.stringify(message)).toString("utf8");
const settle = () => new Promise((resolve) => setImmediate(resolve));

describe("request JSON", () => {
  test("is byte for byte JSON.stringify of the request object, for every kind of params", () => {
    const nasty = "& < > \" ' \\ \u0000\u001f\u2028 😀 " + "x".repeat(10_000);
    const kinds: unknown[] = [
      undefined,
      null,
      { text: nasty },
      [1, "two", null, { three: [] }],
      { nested: { deep: { a: -0, b: 1e21, c: 0.1, d: Number.NaN, e: undefined } } },
      { toJSON: () => ({ made: "by toJSON" }) },
      { toJSON: () => undefined },
      () => "a function",
      Symbol("s"),
      "a string",
      42,
      new Date(0),
      Object.create(null),
    ];
    for (const method of ["xml/escape", nasty, "", "a\"b"]) {
      for (const [n, params] of kinds.entries()) {
        const expected = JSON.stringify(params === undefined ? { jsonrpc: "2.0", id: n, method } : { jsonrpc: "2.0", id: n, method, params });
        assert.equal(requestJson(n, method, params), expected, `params #${n} with method ${JSON.stringify(method.slice(0, 20))}`);
      }
    }
  });

  test("throws where JSON.stringify throws (a BigInt, a cycle)", () => {
    const cycle: Record<string, unknown> = {};
    cycle.self = cycle;
    assert.throws(() => requestJson(1, "m", { big: 1n }), TypeError);
    assert.throws(() => requestJson(1, "m", cycle), TypeError);
  });
});

describe("connection writes", () => {
  test("requests made in one tick go out in one write, in order; a later one in its own", async () => {
    const { connection, writes, answer } = recorded();
    const first = connection.request("a/one", { n: 1 });
    const second = connection.request("a/two", undefined);
    connection.notify("a/note", { n: 3 });
    await settle();
    const third = connection.request("a/three", { n: 4 });
    await settle();
    assert.deepEqual(writes, [
      frame({ jsonrpc: "2.0", id: 1, method: "a/one", params: { n: 1 } }) +
        frame({ jsonrpc: "2.0", id: 2, method: "a/two" }) +
        frame({ jsonrpc: "2.0", method: "a/note", params: { n: 3 } }),
      frame({ jsonrpc: "2.0", id: 3, method: "a/three", params: { n: 4 } }),
    ]);
    answer({ jsonrpc: "2.0", id: 2, result: "two" });
    answer({ jsonrpc: "2.0", id: 1, result: "one" });
    answer({ jsonrpc: "2.0", id: 3, result: "three" });
    assert.deepEqual(await Promise.all([first, second, third]), ["one", "two", "three"]);
  });

  test("large frames made in one tick are written one by one, not copied together", async () => {
    const { connection, writes } = recorded();
    const big = "x".repeat(40 * 1024);
    void connection.request("a/one", { big });
    void connection.request("a/two", { big });
    await settle();
    assert.deepEqual(writes, [
      frame({ jsonrpc: "2.0", id: 1, method: "a/one", params: { big } }),
      frame({ jsonrpc: "2.0", id: 2, method: "a/two", params: { big } }),
    ]);
  });

  test("a call for one field resolves with that field, undefined when the result has none; errors still reject", async () => {
    const { connection, answer } = recorded();
    const text = connection.request("a/one", {}, {}, "text");
    const notAnObject = connection.request("a/two", {}, {}, "text");
    const missing = connection.request("a/three", {}, {}, "text");
    const failed = connection.request("a/four", {}, {}, "text");
    await settle();
    answer({ jsonrpc: "2.0", id: 1, result: { text: "<&>", other: 1 } });
    answer({ jsonrpc: "2.0", id: 2, result: null });
    answer({ jsonrpc: "2.0", id: 3, result: { other: 1 } });
    answer({ jsonrpc: "2.0", id: 4, error: { code: -32602, message: "bad text" } });
    assert.deepEqual(await Promise.all([text, notAnObject, missing]), ["<&>", undefined, undefined]);
    await assert.rejects(failed, { code: -32602, message: "bad text" });
  });

  test("closing writes what was queued first, and rejects the calls waiting", async () => {
    const { connection, writes } = recorded();
    const waiting = connection.request("a/one", {});
    connection.notify("exit");
    connection.close(new Error("closed"));
    await assert.rejects(waiting, /closed/);
    await settle();
    assert.deepEqual(writes, [frame({ jsonrpc: "2.0", id: 1, method: "a/one", params: {} }) + frame({ jsonrpc: "2.0", method: "exit" })]);
  });
});
