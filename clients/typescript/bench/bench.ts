/**
 * Client-side cost of the sidecar: per-call overhead of a small request, and an agent loop
 * (each step appends 4 events and renders the XML document) run three ways: the whole document
 * from the sidecar each step, XML deltas from the sidecar, and an in-process serializer.
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

// 2. Agent loop: append 4 events, render the XML document, STEPS times; over the sidecar the
// whole document each step, then with XML deltas (only the new lines), then in-process.
const events = loopEvents(STEPS * 4);
const mean = (samples: number[]) => samples.reduce((a, b) => a + b, 0) / samples.length;

async function sidecarLoop(incremental: boolean, pipelined = false): Promise<{ steps: number[]; xml: string }> {
  const thread = await tk.openThread();
  const steps: number[] = [];
  let xml = "";
  for (let step = 0; step < STEPS; step++) {
    const batch = events.slice(step * 4, step * 4 + 4);
    const [ms, rendered] = await timed(async () => {
      let document: string;
      if (pipelined) {
        // Both requests sent at once: the server runs a thread's requests in arrival order, so
        // the render sees the append, and the step costs one round trip instead of two.
        [, document] = await Promise.all([thread.append(batch), thread.renderXml({ incremental })]);
      } else {
        await thread.append(batch);
        document = await thread.renderXml({ incremental });
      }
      // The incremental document is a concatenation V8 copies into one string on first use;
      // a host uses it (sends it on), so that copy is part of the step.
      document.charCodeAt(0);
      return document;
    });
    steps.push(ms);
    xml = rendered;
  }
  await thread.delete();
  return { steps, xml };
}

const whole = await sidecarLoop(false);
console.log(`agent loop via sidecar, whole document each step (append 4 + render xml), ${STEPS} steps: ${summary(whole.steps)}`);
const deltas = await sidecarLoop(true);
console.log(`agent loop via sidecar, XML deltas (append 4 + renderXml({incremental: true})), ${STEPS} steps: ${summary(deltas.steps)}`);

const piped = await sidecarLoop(true, true);
console.log(`agent loop via sidecar, XML deltas, append and render pipelined (one round trip a step), ${STEPS} steps: ${summary(piped.steps)}`);

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
console.log(`final documents equal: ${whole.xml === localXml && deltas.xml === localXml && piped.xml === localXml} (${localXml.length} chars)`);
console.log(
  `last 100 steps, mean: sidecar whole ${mean(whole.steps.slice(-100)).toFixed(2)} ms, ` +
    `sidecar deltas ${mean(deltas.steps.slice(-100)).toFixed(2)} ms, pipelined ${mean(piped.steps.slice(-100)).toFixed(2)} ms, in-process ${mean(localSteps.slice(-100)).toFixed(2)} ms`,
);
await tk.close();
