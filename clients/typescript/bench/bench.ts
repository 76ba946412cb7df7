/**
 * Client-side cost of the sidecar: per-call overhead of a small request, and an agent loop
 * (each step appends 4 events and renders the XML document) against an in-process serializer.
 *
 *   THREADKEEPER_BIN=target/release/threadkeeper npm run bench
 */
import { ThreadKeeper } from "../src/index.js";
import type { AnyAgentEvent } from "../src/types.js";
import { loopEvents } from "../test/helpers.js";
import { serializeThreadToXml } from "./reference-serializer.js";

const CALLS = Number(process.env.BENCH_CALLS ?? 2000);
const STEPS = Number(process.env.BENCH_STEPS ?? 1000);

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

function summary(samplesMs: number[]): string {
  const sorted = [...samplesMs].sort((a, b) => a - b);
  const total = samplesMs.reduce((a, b) => a + b, 0);
  return `p50 ${(percentile(sorted, 50) * 1000).toFixed(0)} µs, p99 ${(percentile(sorted, 99) * 1000).toFixed(0)} µs, mean ${((total / samplesMs.length) * 1000).toFixed(0)} µs, total ${total.toFixed(0)} ms`;
}

async function timed<T>(f: () => Promise<T> | T): Promise<[number, T]> {
  const start = process.hrtime.bigint();
  const value = await f();
  return [Number(process.hrtime.bigint() - start) / 1e6, value];
}

const tk = await ThreadKeeper.spawn({ args: ["--store", "memory"] });
console.log(`server ${tk.server.serverInfo.version} at ${tk.binary}; node ${process.version}`);

// 1. Per-call overhead: one small request at a time.
for (let i = 0; i < 200; i++) await tk.escapeXml("warm <up>");
const perCall: number[] = [];
for (let i = 0; i < CALLS; i++) perCall.push((await timed(() => tk.escapeXml(`a < b & ${i}`)))[0]);
console.log(`xml/escape, ${CALLS} sequential calls: ${summary(perCall)}`);

// Pipelined: all calls in flight at once.
const [pipelined] = await timed(() => Promise.all([...Array(CALLS).keys()].map((i) => tk.escapeXml(`a < b & ${i}`))));
console.log(`xml/escape, ${CALLS} calls in flight: total ${pipelined.toFixed(0)} ms (${((pipelined / CALLS) * 1000).toFixed(1)} µs per call)`);

// 2. Agent loop: append 4 events, render the XML document, STEPS times.
const events = loopEvents(STEPS * 4);
const thread = await tk.openThread();
const sidecarSteps: number[] = [];
let sidecarXml = "";
for (let step = 0; step < STEPS; step++) {
  const batch = events.slice(step * 4, step * 4 + 4);
  const [ms, xml] = await timed(async () => {
    await thread.append(batch);
    return thread.renderXml();
  });
  sidecarSteps.push(ms);
  sidecarXml = xml;
}
console.log(`agent loop via sidecar (append 4 + render xml), ${STEPS} steps: ${summary(sidecarSteps)}`);

const local: AnyAgentEvent[] = [];
const localSteps: number[] = [];
let localXml = "";
for (let step = 0; step < STEPS; step++) {
  const batch = events.slice(step * 4, step * 4 + 4);
  const [ms, xml] = await timed(() => {
    local.push(...batch);
    return serializeThreadToXml(local);
  });
  localSteps.push(ms);
  localXml = xml;
}
console.log(`agent loop in-process reference (push 4 + serialize all), ${STEPS} steps: ${summary(localSteps)}`);
console.log(`final documents equal: ${sidecarXml === localXml} (${sidecarXml.length} chars)`);
console.log(`last 100 steps, mean: sidecar ${(sidecarSteps.slice(-100).reduce((a, b) => a + b, 0) / 100).toFixed(2)} ms, in-process ${(localSteps.slice(-100).reduce((a, b) => a + b, 0) / 100).toFixed(2)} ms`);
await tk.close();
