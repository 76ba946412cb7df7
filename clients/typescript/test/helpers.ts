import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { findBinary, ThreadKeeper, ThreadKeeperError, type AnyAgentEvent } from "../src/index.js";

/** The binary under test: THREADKEEPER_BIN, else the usual discovery. */
export const BINARY = findBinary();

/** Tests pass the store explicitly: the server's default store may change. */
export const MEMORY_ARGS = ["--store", "memory"];

export function spawnMemory(extraArgs: string[] = []): Promise<ThreadKeeper> {
  return ThreadKeeper.spawn({ binary: BINARY, args: [...MEMORY_ARGS, ...extraArgs], clientInfo: { name: "threadkeeper-js-tests" } });
}

/** The repository root (the folder with Cargo.toml above this package). */
export function repoRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, "Cargo.toml"))) {
    const parent = dirname(dir);
    if (parent === dir) throw new Error("not inside the threadkeeper repository");
    dir = parent;
  }
  return resolve(dir);
}

/** The seed's example thread. */
export function sampleEvents(): AnyAgentEvent[] {
  return [
    { type: "message", role: "user", content: "What is 2+2?", iteration: 0, timestamp: 1700000000000 },
    { type: "tool_call", toolName: "calculator", toolCallId: "c1", args: { expression: "2+2" }, iteration: 1, timestamp: 1700000000001 },
    { type: "tool_result", toolCallId: "c1", result: "4", iteration: 1, timestamp: 1700000000002 },
    { type: "message", role: "assistant", content: "The answer is 4.", iteration: 1, timestamp: 1700000000003 },
    { type: "completion", result: "The answer is 4.", verified: true, iteration: 1, timestamp: 1700000000004 },
  ];
}

/** The seed-000 document of `sampleEvents()`, written out by hand. */
export const SAMPLE_XML = [
  "<thread>",
  '  <event type="human" id="0" iteration="0">What is 2+2?</event>',
  '  <event type="tool_input" id="1" name="calculator" iteration="1">{&quot;expression&quot;:&quot;2+2&quot;}</event>',
  '  <event type="tool_output" id="2" name="calculator" status="success" iteration="1">4</event>',
  '  <event type="ai" id="3" iteration="1">The answer is 4.</event>',
  '  <event type="completion" id="4" iteration="1">The answer is 4.</event>',
  "</thread>",
].join("\n");

/** `n` events of an agent loop: user turn, tool call, tool result, assistant reply, repeated. */
export function loopEvents(n: number, start = 0): AnyAgentEvent[] {
  const events: AnyAgentEvent[] = [];
  for (let i = start; i < start + n; i++) {
    const step = Math.floor(i / 4);
    const id = `call_${step}`;
    switch (i % 4) {
      case 0:
        events.push({ type: "message", role: "user", content: `Step ${step}: what is ${step} * 3 & "why"?`, iteration: step, timestamp: 1700000000000 + i });
        break;
      case 1:
        events.push({ type: "tool_call", toolName: "calculator", toolCallId: id, args: { expression: `${step} * 3`, precise: true }, iteration: step, timestamp: 1700000000000 + i });
        break;
      case 2:
        events.push({ type: "tool_result", toolCallId: id, result: { value: step * 3, unit: null }, iteration: step, timestamp: 1700000000000 + i });
        break;
      default:
        events.push({ type: "message", role: "assistant", content: `It is <b>${step * 3}</b>.`, iteration: step, timestamp: 1700000000000 + i });
    }
  }
  return events;
}

/** Awaits a rejection and checks it is a `ThreadKeeperError` with `code`; returns it. */
export async function rejectsWithCode(promise: Promise<unknown>, code: number): Promise<ThreadKeeperError> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof ThreadKeeperError, `expected a ThreadKeeperError, got ${String(error)}`);
    assert.equal(error.code, code, `expected code ${code}, got ${error.code}: ${error.message}`);
    return error;
  }
  assert.fail(`expected a rejection with code ${code}, but the call succeeded`);
}

/** Checks that every field of `expected` is in `actual` with an equal value (extra fields allowed). */
export function assertSubset(actual: unknown, expected: unknown, path = "$"): void {
  if (expected !== null && typeof expected === "object" && !Array.isArray(expected)) {
    assert.ok(actual !== null && typeof actual === "object" && !Array.isArray(actual), `${path}: expected an object, got ${JSON.stringify(actual)}`);
    for (const [key, value] of Object.entries(expected)) assertSubset((actual as Record<string, unknown>)[key], value, `${path}.${key}`);
  } else if (Array.isArray(expected)) {
    assert.ok(Array.isArray(actual), `${path}: expected an array, got ${JSON.stringify(actual)}`);
    assert.equal(actual.length, expected.length, `${path}: length`);
    expected.forEach((item, i) => assertSubset(actual[i], item, `${path}[${i}]`));
  } else {
    assert.deepEqual(actual, expected, path);
  }
}

/**
 * Stops the server process and waits until the kernel says it is stopped: `kill` only queues
 * SIGSTOP, and a server running on another core could still answer a request sent right after.
 */
export async function freeze(pid: number): Promise<void> {
  process.kill(pid, "SIGSTOP");
  for (let i = 0; i < 400; i++) {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The state follows the command name in parentheses: "pid (comm) T ...".
    if (stat.slice(stat.lastIndexOf(")") + 2).startsWith("T")) return;
    await new Promise((r) => setTimeout(r, 5));
  }
  throw new Error(`process ${pid} did not stop`);
}
