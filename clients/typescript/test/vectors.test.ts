/**
 * Replays protocol/vectors/*.json against the real binary: each file on a fresh server, its
 * exchanges in order, each request written as is and the next message read and compared with
 * the expected response (`"<any>"` matches any value; `null` means no response).
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, test } from "node:test";
import { StreamMessageReader, StreamMessageWriter, type Message } from "vscode-jsonrpc/node";
import { BINARY, MEMORY_ARGS, repoRoot } from "./helpers.js";

interface Vector {
  name: string;
  description?: string;
  exchanges: { request: unknown; response: unknown }[];
}

const ANY = "<any>";
const RESPONSE_TIMEOUT_MS = 10_000;

/** Differences between an expected and an actual JSON value, as `path: what` lines. */
export function mismatches(expected: unknown, actual: unknown, path = "$"): string[] {
  if (expected === ANY) return actual === undefined ? [`${path}: missing`] : [];
  if (Array.isArray(expected)) {
    if (!Array.isArray(actual)) return [`${path}: expected an array, got ${JSON.stringify(actual)}`];
    if (actual.length !== expected.length) return [`${path}: expected ${expected.length} items, got ${actual.length}: ${JSON.stringify(actual)}`];
    return expected.flatMap((item, i) => mismatches(item, actual[i], `${path}[${i}]`));
  }
  if (expected !== null && typeof expected === "object") {
    if (actual === null || typeof actual !== "object" || Array.isArray(actual)) return [`${path}: expected an object, got ${JSON.stringify(actual)}`];
    const e = expected as Record<string, unknown>;
    const a = actual as Record<string, unknown>;
    const extra = Object.keys(a).filter((k) => !(k in e)).map((k) => `${path}.${k}: unexpected (${JSON.stringify(a[k])})`);
    return [...Object.keys(e).flatMap((k) => (k in a ? mismatches(e[k], a[k], `${path}.${k}`) : [`${path}.${k}: missing`])), ...extra];
  }
  return Object.is(expected, actual) ? [] : [`${path}: expected ${JSON.stringify(expected)}, got ${JSON.stringify(actual)}`];
}

function loadVectors(): { file: string; vector: Vector }[] {
  const dir = join(repoRoot(), "protocol", "vectors");
  return readdirSync(dir)
    .filter((f) => f.endsWith(".json"))
    .sort()
    .map((file) => ({ file, vector: JSON.parse(readFileSync(join(dir, file), "utf8")) as Vector }));
}

async function replay(vector: Vector): Promise<void> {
  const child = spawn(BINARY, MEMORY_ARGS, { stdio: ["pipe", "pipe", "pipe"] });
  let stderr = "";
  child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
  child.stdin.on("error", () => {});
  const exited = new Promise<number | null>((resolve) => child.on("close", (code) => resolve(code)));
  const reader = new StreamMessageReader(child.stdout);
  const writer = new StreamMessageWriter(child.stdin);
  const inbox: unknown[] = [];
  let wake: (() => void) | undefined;
  reader.listen((message) => {
    inbox.push(message);
    wake?.();
  });
  const next = async (): Promise<unknown> => {
    const deadline = Date.now() + RESPONSE_TIMEOUT_MS;
    while (inbox.length === 0) {
      if (Date.now() > deadline || child.exitCode !== null) throw new Error(`no response (server stderr: ${stderr})`);
      await new Promise<void>((resolve) => {
        wake = resolve;
        setTimeout(resolve, 50);
      });
    }
    return inbox.shift();
  };
  try {
    for (const [i, { request, response }] of vector.exchanges.entries()) {
      await writer.write(request as Message);
      if (response === null) continue;
      const actual = await next();
      const diff = mismatches(response, actual);
      assert.deepEqual(diff, [], `exchange ${i} (${JSON.stringify(request).slice(0, 120)}): ${diff.join("; ")}`);
    }
    child.stdin.end();
    await exited;
    assert.deepEqual(inbox, [], "no messages beyond the expected responses");
  } finally {
    child.kill("SIGKILL");
    reader.dispose();
    writer.dispose();
  }
}

describe("protocol vectors", () => {
  const vectors = loadVectors();
  test("there are vectors to replay", () => {
    assert.ok(vectors.length >= 3, `found ${vectors.length}`);
  });
  for (const { file, vector } of vectors) {
    test(`${file}: ${vector.name}`, () => replay(vector));
  }
  test("the matcher accepts <any> and reports differences with paths", () => {
    assert.deepEqual(mismatches({ a: ANY, b: [1, { c: 2 }] }, { a: { x: 1 }, b: [1, { c: 2 }] }), []);
    assert.deepEqual(mismatches({ a: ANY }, {}), ["$.a: missing"]);
    assert.deepEqual(mismatches({ b: [1, { c: 2 }] }, { b: [1, { c: 3 }], d: 0 }), ["$.b[1].c: expected 2, got 3", "$.d: unexpected (0)"]);
    assert.deepEqual(mismatches(null, null), []);
    assert.deepEqual(mismatches([1], [1, 2]), ["$: expected 1 items, got 2: [1,2]"]);
  });
});
