/**
 * Replays protocol/vectors/*.json against the real binary as protocol/vectors/README.md says:
 * each file on a fresh `serve --store memory` plus its `args`, its exchanges in order (every
 * response read before the next message is sent), then the input closed: no further message may
 * come, and the exit status must be `exitCode` when the file gives one. This client speaks LSP
 * framing only, so that is the framing replayed (the server's own suite replays NDJSON too).
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, test } from "node:test";
import { StreamMessageReader, StreamMessageWriter, type Message } from "vscode-jsonrpc/node";
import { BINARY, MEMORY_ARGS, repoRoot } from "./helpers.js";

interface Exchange {
  /** What is sent: a JSON value (`request`) or verbatim text (`requestText`). */
  send: { json: unknown } | { text: string };
  /** The expected message; `null` when none may come. */
  response: unknown;
}

interface Vector {
  file: string;
  name: string;
  description: string;
  args: string[];
  exitCode?: number;
  exchanges: Exchange[];
}

const ANY = "<any>";
const RESPONSE_TIMEOUT_MS = 20_000;
const EXIT_TIMEOUT_MS = 20_000;

// JavaScript numbers cannot hold every JSON integer (ids like 18446744073709551615). Vector files
// are read with integers beyond 2^53 kept as BigInt, so they are sent with their exact digits.
const UNSAFE_INTEGER = /^-?\d{16,}$/;
const BIGINT_MARK = "\u0000bigint:";

/** JSON.parse, except that integers JavaScript would round become BigInt. */
export function parseKeepingIntegers(text: string): unknown {
  // Quote long integer literals (strings are matched first, so digits inside them stay as they are).
  const marked = text.replace(/"(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?/g, (token) =>
    UNSAFE_INTEGER.test(token) && !Number.isSafeInteger(Number(token)) ? JSON.stringify(BIGINT_MARK + token) : token,
  );
  return JSON.parse(marked, (_key, value: unknown) =>
    typeof value === "string" && value.startsWith(BIGINT_MARK) ? BigInt(value.slice(BIGINT_MARK.length)) : value,
  );
}

/** JSON.stringify that writes BigInt values as their digits. */
export function stringifyKeepingIntegers(value: unknown): string {
  const text = JSON.stringify(value, (_key, v: unknown) => (typeof v === "bigint" ? BIGINT_MARK + v.toString() : v));
  return text.replace(/"\\u0000bigint:(-?\d+)"/g, "$1");
}

function containsBigInt(value: unknown): boolean {
  if (typeof value === "bigint") return true;
  if (value !== null && typeof value === "object") return Object.values(value).some(containsBigInt);
  return false;
}

/**
 * Differences between an expected and an actual JSON value, as `path: what` lines. Objects must
 * have exactly the expected keys, arrays the expected length; numbers compare by value;
 * `"<any>"` matches any value that is present. Key order counts only inside `result.events`.
 * (JSON.parse puts integer-like keys first; such keys in events would hide a key-order
 * difference, and no vector has them.)
 */
export function mismatches(expected: unknown, actual: unknown, path = "$", ordered = false): string[] {
  if (expected === ANY) return actual === undefined ? [`${path}: missing`] : [];
  if (typeof expected === "bigint") {
    // The reader parsed the response with JSON.parse: compare as far as JavaScript can tell.
    const same = typeof actual === "bigint" ? actual === expected : typeof actual === "number" && actual === Number(expected);
    return same ? [] : [`${path}: expected ${expected}, got ${JSON.stringify(actual)}`];
  }
  if (Array.isArray(expected)) {
    if (!Array.isArray(actual)) return [`${path}: expected an array, got ${JSON.stringify(actual)}`];
    if (actual.length !== expected.length) return [`${path}: expected ${expected.length} items, got ${actual.length}: ${JSON.stringify(actual)}`];
    return expected.flatMap((item, i) => mismatches(item, actual[i], `${path}[${i}]`, ordered));
  }
  if (expected !== null && typeof expected === "object") {
    if (actual === null || typeof actual !== "object" || Array.isArray(actual)) return [`${path}: expected an object, got ${JSON.stringify(actual)}`];
    const e = expected as Record<string, unknown>;
    const a = actual as Record<string, unknown>;
    const out = Object.keys(e).flatMap((k) => {
      if (!(k in a)) return [`${path}.${k}: missing`];
      const inEvents = ordered || (k === "events" && path.endsWith(".result"));
      return mismatches(e[k], a[k], `${path}.${k}`, inEvents);
    });
    out.push(...Object.keys(a).filter((k) => !(k in e)).map((k) => `${path}.${k}: unexpected (${JSON.stringify(a[k])})`));
    const [ek, ak] = [Object.keys(e), Object.keys(a)];
    if (ordered && ek.length === ak.length && ek.some((k, i) => k !== ak[i])) {
      out.push(`${path}: key order ${JSON.stringify(ak)}, expected ${JSON.stringify(ek)}`);
    }
    return out;
  }
  return expected === actual ? [] : [`${path}: expected ${JSON.stringify(expected)}, got ${JSON.stringify(actual)}`];
}

/** Reads one vector file, checking its format strictly (README "Format"). */
function loadVector(dir: string, file: string): Vector {
  const raw = parseKeepingIntegers(readFileSync(join(dir, file), "utf8")) as Record<string, unknown>;
  const known = new Set(["name", "description", "args", "exitCode", "exchanges"]);
  const unknown = Object.keys(raw).filter((k) => !known.has(k));
  assert.deepEqual(unknown, [], `${file}: unknown fields`);
  assert.equal(raw.name, file.replace(/\.json$/, ""), `${file}: name must be the file name without .json`);
  assert.equal(typeof raw.description, "string", `${file}: description`);
  const args = raw.args ?? [];
  assert.ok(Array.isArray(args) && args.every((a) => typeof a === "string"), `${file}: args must be strings`);
  assert.ok(raw.exitCode === undefined || Number.isInteger(raw.exitCode), `${file}: exitCode must be an integer`);
  assert.ok(Array.isArray(raw.exchanges) && raw.exchanges.length > 0, `${file}: exchanges`);
  const exchanges = (raw.exchanges as Record<string, unknown>[]).map((ex, i): Exchange => {
    const where = `${file} exchange ${i}`;
    assert.deepEqual(Object.keys(ex).filter((k) => !["request", "requestText", "response"].includes(k)), [], `${where}: unknown fields`);
    assert.ok("response" in ex, `${where}: response is required (null when none is expected)`);
    assert.ok(("request" in ex) !== ("requestText" in ex), `${where}: exactly one of request and requestText`);
    if ("requestText" in ex) {
      assert.ok(typeof ex.requestText === "string" && !ex.requestText.includes("\n"), `${where}: requestText must be one line of text`);
      return { send: { text: ex.requestText }, response: ex.response };
    }
    return { send: { json: ex.request }, response: ex.response };
  });
  return { file, name: raw.name as string, description: raw.description as string, args: args as string[], exitCode: raw.exitCode as number | undefined, exchanges };
}

function loadVectors(): Vector[] {
  const dir = join(repoRoot(), "protocol", "vectors");
  return readdirSync(dir)
    .filter((f) => f.endsWith(".json"))
    .sort()
    .map((file) => loadVector(dir, file));
}

/** The crate version, which `initialize` must report (vectors match it with "<any>"). */
function crateVersion(): string {
  const manifest = readFileSync(join(repoRoot(), "Cargo.toml"), "utf8");
  const version = /^\[package\][^[]*?^version\s*=\s*"([^"]+)"/m.exec(manifest)?.[1];
  assert.ok(version, "Cargo.toml has a package version");
  return version;
}

function label(exchange: Exchange): string {
  return "text" in exchange.send ? `text ${JSON.stringify(exchange.send.text.slice(0, 60))}` : stringifyKeepingIntegers(exchange.send.json).slice(0, 120);
}

async function replay(vector: Vector, version: string): Promise<void> {
  const child = spawn(BINARY, [...MEMORY_ARGS, ...vector.args], { stdio: ["pipe", "pipe", "pipe"] });
  let stderr = "";
  child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
  child.stdin.on("error", () => {});
  const exited = new Promise<number | null>((resolve) => child.on("close", (code) => resolve(code)));
  let ended = false;
  void exited.then(() => (ended = true));
  const reader = new StreamMessageReader(child.stdout);
  const writer = new StreamMessageWriter(child.stdin);
  const inbox: unknown[] = [];
  const readErrors: string[] = [];
  let wake: (() => void) | undefined;
  reader.onError((error) => readErrors.push(String(error)));
  reader.listen((message) => {
    inbox.push(message);
    wake?.();
  });
  const next = async (): Promise<unknown> => {
    const deadline = Date.now() + RESPONSE_TIMEOUT_MS;
    while (inbox.length === 0) {
      if (readErrors.length > 0) throw new Error(`unreadable response: ${readErrors.join("; ")}`);
      if (ended) throw new Error(`the server ended instead of answering (stderr: ${stderr})`);
      if (Date.now() > deadline) throw new Error(`no response within ${RESPONSE_TIMEOUT_MS} ms (stderr: ${stderr})`);
      await new Promise<void>((resolve) => {
        wake = resolve;
        setTimeout(resolve, 50);
      });
    }
    return inbox.shift();
  };
  // vscode-jsonrpc's writer sends what JSON.stringify makes of a value; it cannot send malformed
  // or byte-exact text (`requestText`), nor integers beyond 2^53. Those are framed here by hand
  // (LSP Content-Length) and written to the same pipe, after the writer's earlier writes.
  const writeRaw = (body: string) =>
    new Promise<void>((resolve, reject) => {
      const bytes = Buffer.from(body, "utf8");
      child.stdin.write(Buffer.concat([Buffer.from(`Content-Length: ${bytes.length}\r\n\r\n`, "ascii"), bytes]), (error) => (error ? reject(error) : resolve()));
    });
  try {
    for (const [i, exchange] of vector.exchanges.entries()) {
      if ("text" in exchange.send) await writeRaw(exchange.send.text);
      else if (containsBigInt(exchange.send.json)) await writeRaw(stringifyKeepingIntegers(exchange.send.json));
      else await writer.write(exchange.send.json as Message);
      if (exchange.response === null) continue;
      const actual = await next();
      const diff = mismatches(exchange.response, actual);
      assert.deepEqual(diff, [], `exchange ${i} (${label(exchange)}): ${diff.join("; ")}\n    got: ${JSON.stringify(actual)}`);
      const sent = "json" in exchange.send ? (exchange.send.json as { method?: unknown } | null) : null;
      if (sent?.method === "initialize") {
        const reported = (actual as { result?: { serverInfo?: { version?: unknown } } }).result?.serverInfo?.version;
        if (reported !== undefined) assert.equal(reported, version, `exchange ${i}: serverInfo.version`);
      }
    }
    child.stdin.end();
    let timer: NodeJS.Timeout | undefined;
    const status = await Promise.race([exited, new Promise<"timeout">((resolve) => (timer = setTimeout(() => resolve("timeout"), EXIT_TIMEOUT_MS)))]);
    clearTimeout(timer);
    assert.notEqual(status, "timeout", "the server must end its output and exit once its input is closed");
    // 'close' comes after stdout ended; let the reader deliver what it already has.
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(readErrors, [], "every message the server wrote is readable");
    assert.deepEqual(inbox, [], "no messages beyond the expected responses");
    if (vector.exitCode !== undefined) assert.equal(status, vector.exitCode, "exit status");
  } finally {
    child.kill("SIGKILL");
    reader.dispose();
    writer.dispose();
  }
}

describe("protocol vectors", () => {
  const vectors = loadVectors();
  const version = crateVersion();
  test("there are vectors to replay", () => {
    assert.ok(vectors.length >= 10, `found ${vectors.length}`);
  });
  for (const vector of vectors) {
    test(vector.file, () => replay(vector, version));
  }
  test("the matcher accepts <any>, compares numbers by value, checks key order in result.events only", () => {
    assert.deepEqual(mismatches({ a: ANY, b: [1, { c: 2 }] }, { a: { x: 1 }, b: [1, { c: 2 }] }), []);
    assert.deepEqual(mismatches({ a: ANY }, {}), ["$.a: missing"]);
    assert.deepEqual(mismatches({ b: [1, { c: 2 }] }, { b: [1, { c: 3 }], d: 0 }), ["$.b[1].c: expected 2, got 3", "$.d: unexpected (0)"]);
    assert.deepEqual(mismatches(null, null), []);
    assert.deepEqual(mismatches(null, false), ["$: expected null, got false"]);
    assert.deepEqual(mismatches([1], [1, 2]), ["$: expected 1 items, got 2: [1,2]"]);
    assert.deepEqual(mismatches({ x: 1, y: 2 }, { y: 2, x: 1 }), [], "order does not count outside events");
    const expected = { result: { events: [{ type: "x", iteration: 0, nested: { a: 1, b: 2 } }] } };
    assert.deepEqual(mismatches(expected, { result: { events: [{ type: "x", iteration: 0, nested: { a: 1, b: 2 } }] } }), []);
    assert.deepEqual(mismatches(expected, { result: { events: [{ iteration: 0, type: "x", nested: { b: 2, a: 1 } }] } }), [
      '$.result.events[0].nested: key order ["b","a"], expected ["a","b"]',
      '$.result.events[0]: key order ["iteration","type","nested"], expected ["type","iteration","nested"]',
    ]);
    assert.deepEqual(mismatches([expected], [{ result: { events: [{ iteration: 0, type: "x", nested: { a: 1, b: 2 } }] } }]), [
      '$[0].result.events[0]: key order ["iteration","type","nested"], expected ["type","iteration","nested"]',
    ], "inside a batch response too");
    assert.deepEqual(mismatches({ params: { events: [{ b: 1, a: 2 }] } }, { params: { events: [{ a: 2, b: 1 }] } }), [], "only result.events");
  });
  test("vector files keep integers JavaScript would round", () => {
    const value = parseKeepingIntegers('{"id": 18446744073709551615, "n": [1.5, 12, -9007199254740993], "s": "18446744073709551615"}');
    assert.deepEqual(value, { id: 18446744073709551615n, n: [1.5, 12, -9007199254740993n], s: "18446744073709551615" });
    assert.equal(stringifyKeepingIntegers(value), '{"id":18446744073709551615,"n":[1.5,12,-9007199254740993],"s":"18446744073709551615"}');
    assert.deepEqual(mismatches(18446744073709551615n, 18446744073709551615), []);
    assert.deepEqual(mismatches(18446744073709551615n, 1), ["$: expected 18446744073709551615, got 1"]);
  });
});
