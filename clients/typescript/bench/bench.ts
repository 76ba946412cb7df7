/**
 * Client-side cost of the sidecar: per-call overhead of a small request, and an agent loop
 * (each step appends 4 events and renders the XML document) run several ways: the whole
 * document from the sidecar each step, XML deltas from the sidecar (append then render, both
 * pipelined, and `thread.step()`), and an in-process serializer. Under them, the floor: the
 * same frames echoed by `cat` over the same kind of pipes, in the same run.
 *
 *   THREADKEEPER_BIN=target/release/threadkeeper npm run bench
 */
import { spawn as spawnProcess } from "node:child_process";
import { ThreadKeeper } from "../src/index.js";
import { encodeFrame, FrameDecoder } from "../src/framing.js";
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

/** A process driven over bare pipes with no client library: frames in, frame bodies out. */
interface RawPeer {
  /** Writes `bytes` in one write and resolves with the next `frames` frame bodies. */
  roundTrip(bytes: Buffer, frames: number): Promise<string[]>;
  close(): void;
}

/**
 * Spawned with the same stdio pipes as the client gives the server; what comes back is cut into
 * frames by the client's own `FrameDecoder`, and nothing is parsed. Against `cat` (a compiled
 * echo, no shell) this is the floor under a call: what a round trip of these bytes costs at
 * least. Against a second server it is the server's round trip without the client.
 */
function rawPeer(command: string, args: string[]): RawPeer {
  const peer = spawnProcess(command, args, { stdio: ["pipe", "pipe", "pipe"] });
  peer.stderr.resume();
  let bodies: string[] = [];
  let waiting = 0;
  let done: ((bodies: string[]) => void) | undefined;
  const decoder = new FrameDecoder((body) => {
    bodies.push(body);
    if (bodies.length === waiting) done?.(bodies);
  });
  peer.stdout.on("data", (chunk: Buffer) => decoder.push(chunk));
  return {
    roundTrip(bytes, frames) {
      bodies = [];
      waiting = frames;
      return new Promise((resolve) => {
        done = resolve;
        peer.stdin.write(bytes);
      });
    },
    close: () => peer.stdin.end(),
  };
}

const frameOf = (message: object) => encodeFrame(JSON.stringify(message));

/** The frames of `thread/append` of `batch` then `thread/render` of the delta, as `thread.step()` writes them. */
function stepFrames(threadId: string, id: number, batch: AnyAgentEvent[], fromEvent: number): Buffer {
  const append = { jsonrpc: "2.0", id, method: "thread/append", params: { threadId, events: batch } };
  const render = { jsonrpc: "2.0", id: id + 1, method: "thread/render", params: { threadId, format: "xml", options: { fromEvent } } };
  return Buffer.concat([frameOf(append), frameOf(render)]);
}

const tk = await ThreadKeeper.spawn({ args: ["--store", "memory"] });
const echo = rawPeer("cat", []);
const rawServer = rawPeer(tk.binary, ["--store", "memory"]);
await rawServer.roundTrip(frameOf({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: 1 } }), 1);
console.log(`server ${tk.server.serverInfo.version} at ${tk.binary}; node ${process.version}`);

// 1. Per-call overhead: one small request at a time, each followed by the same request's bytes
// echoed by `cat` (the floor, taken in the same moments).
const smallFrame = frameOf({ jsonrpc: "2.0", id: 1234, method: "xml/escape", params: { text: "a < b & 1234" } });
for (let i = 0; i < 200; i++) {
  await tk.escapeXml("warm <up>");
  await echo.roundTrip(smallFrame, 1);
}
const perCall: number[] = [];
const smallFloor: number[] = [];
for (let i = 0; i < CALLS; i++) {
  perCall.push((await timed(() => tk.escapeXml(`a < b & ${i}`)))[0]);
  smallFloor.push((await timed(() => echo.roundTrip(smallFrame, 1)))[0]);
}
console.log(`xml/escape, ${CALLS} sequential calls: ${summary(perCall)}`);
console.log(`floor: the same request echoed by cat, ${CALLS} round trips: ${summary(smallFloor)}`);

// Pipelined: all calls in flight at once.
const [pipelined] = await timed(() => Promise.all([...Array(CALLS).keys()].map((i) => tk.escapeXml(`a < b & ${i}`))));
console.log(`xml/escape, ${CALLS} calls in flight: total ${pipelined.toFixed(0)} ms (${((pipelined / CALLS) * 1000).toFixed(1)} µs per call)`);

// 2. Agent loop: append 4 events, render the XML document, STEPS times; over the sidecar the
// whole document each step, then with XML deltas (only the new lines), then in-process.
const events = loopEvents(STEPS * 4);
const mean = (samples: number[]) => samples.reduce((a, b) => a + b, 0) / samples.length;

type LoopMode = "sequential" | "pipelined" | "step";

/** Per step, beside the loop's own time: its floor, the raw server, the client's call alone. */
interface StepProbes {
  /** The step's two request frames echoed by `cat`. */
  floor: number[];
  /** The same two requests written to a second server over bare pipes, against its own thread. */
  raw: number[];
  /** The client's step without using the document (the rest of the step is V8 copying it). */
  call: number[];
}

/**
 * The loop over the sidecar. With `probes`, each step also takes the floor and the raw server
 * round trip of the same requests, the three in turn in a rotating order, so load on the
 * machine falls on all alike.
 */
async function sidecarLoop(incremental: boolean, mode: LoopMode = "sequential", probes?: StepProbes): Promise<{ steps: number[]; xml: string }> {
  const thread = await tk.openThread();
  const rawThreadId = probes
    ? (JSON.parse((await rawServer.roundTrip(frameOf({ jsonrpc: "2.0", id: 2, method: "thread/open", params: {} }), 1))[0]!) as { result: { threadId: string } }).result.threadId
    : "";
  const steps: number[] = [];
  let xml = "";
  for (let step = 0; step < STEPS; step++) {
    const batch = events.slice(step * 4, step * 4 + 4);
    const clientStep = async () => {
      const start = process.hrtime.bigint();
      const [ms, rendered] = await timed(async () => {
        let document: string;
        if (mode === "step") {
          document = (await thread.step(batch)).xml;
        } else if (mode === "pipelined") {
          // Both requests sent at once: the server runs a thread's requests in arrival order, so
          // the render sees the append, and the step costs one round trip instead of two.
          [, document] = await Promise.all([thread.append(batch), thread.renderXml({ incremental })]);
        } else {
          await thread.append(batch);
          document = await thread.renderXml({ incremental });
        }
        if (probes) probes.call.push(Number(process.hrtime.bigint() - start) / 1e6);
        // The incremental document is a concatenation V8 copies into one string on first use;
        // a host uses it (sends it on), so that copy is part of the step.
        document.charCodeAt(0);
        return document;
      });
      steps.push(ms);
      xml = rendered;
    };
    if (!probes) {
      await clientStep();
      continue;
    }
    const echoFrames = stepFrames(thread.id, step * 2, batch, step * 4);
    const rawFrames = stepFrames(rawThreadId, step * 2 + 10, batch, step * 4);
    const turns = [
      async () => probes.floor.push((await timed(() => echo.roundTrip(echoFrames, 2)))[0]),
      async () => probes.raw.push((await timed(() => rawServer.roundTrip(rawFrames, 2)))[0]),
      clientStep,
    ];
    for (let k = 0; k < 3; k++) await turns[(step + k) % 3]!();
  }
  await thread.delete();
  return { steps, xml };
}

const whole = await sidecarLoop(false);
console.log(`agent loop via sidecar, whole document each step (append 4 + render xml), ${STEPS} steps: ${summary(whole.steps)}`);
const deltas = await sidecarLoop(true);
console.log(`agent loop via sidecar, XML deltas (append 4 + renderXml({incremental: true})), ${STEPS} steps: ${summary(deltas.steps)}`);

const piped = await sidecarLoop(true, "pipelined");
console.log(`agent loop via sidecar, XML deltas, append and render pipelined (one round trip a step), ${STEPS} steps: ${summary(piped.steps)}`);
const stepped = await sidecarLoop(true, "step");
console.log(`agent loop via sidecar, thread.step(batch) (append + incremental render in one write), ${STEPS} steps: ${summary(stepped.steps)}`);
// The same loop again, each step between its floor and its raw server round trip.
const probes: StepProbes = { floor: [], raw: [], call: [] };
const probed = await sidecarLoop(true, "step", probes);
const copies = probed.steps.map((ms, i) => ms - probes.call[i]!);
console.log(`thread.step again, each step next to its floor and raw server round trip: ${summary(probed.steps)}`);
console.log(`  the same steps until the document is used: ${summary(probes.call)}`);
console.log(`  V8 copying the document into one string on first use: ${summary(copies)}`);
console.log(`  the raw server round trip of each step's two requests (no client): ${summary(probes.raw)}`);
console.log(`  floor: each step's two request frames echoed by cat: ${summary(probes.floor)}`);

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
const documentsEqual = [whole, deltas, piped, stepped, probed].every((run) => run.xml === localXml);
console.log(`final documents equal: ${documentsEqual} (${localXml.length} chars)`);
console.log(
  `last 100 steps, mean: sidecar whole ${mean(whole.steps.slice(-100)).toFixed(2)} ms, ` +
    `sidecar deltas ${mean(deltas.steps.slice(-100)).toFixed(2)} ms, pipelined ${mean(piped.steps.slice(-100)).toFixed(2)} ms, ` +
    `step ${mean(stepped.steps.slice(-100)).toFixed(2)} ms, in-process ${mean(localSteps.slice(-100)).toFixed(2)} ms`,
);

// 3. Against the target (the loop ≥ 20× the in-process reference) and the floor under it.
const sum = (samples: number[]) => samples.reduce((a, b) => a + b, 0);
const p50 = (samples: number[]) => percentile([...samples].sort((a, b) => a - b), 50);
const us = (ms: number) => `${(ms * 1000).toFixed(0)} µs`;
const firstLast = (samples: number[]) => `${us(mean(samples.slice(0, 100)))} / ${us(mean(samples.slice(-100)))}`;
const reference = sum(localSteps);
const floorP50 = p50(probes.floor);
for (const [name, run] of [["pipelined", piped.steps], ["thread.step", stepped.steps]] as const) {
  console.log(
    `${name}: ${sum(run).toFixed(0)} ms, ${(reference / sum(run)).toFixed(1)}× the in-process reference; ` +
      `per step p50 ${us(p50(run))} = ${(p50(run) / floorP50).toFixed(1)}× the step floor; first / last 100 steps, mean: ${firstLast(run)}`,
  );
}
console.log(
  `thread.step until the document is used: p50 ${us(p50(probes.call))} = ${(p50(probes.call) / floorP50).toFixed(1)}× the floor, ` +
    `${(p50(probes.call) / p50(probes.raw)).toFixed(2)}× the raw server round trip; first / last 100 steps, mean: ${firstLast(probes.call)}`,
);
console.log(`the document's copy, first / last 100 steps, mean: ${firstLast(copies)}`);
console.log(
  `raw server: p50 ${us(p50(probes.raw))} = ${(p50(probes.raw) / floorP50).toFixed(1)}× the floor; first / last 100 steps, mean: ${firstLast(probes.raw)}; ` +
    `floor first / last 100: ${firstLast(probes.floor)}`,
);
console.log(
  `20× the reference needs ≤ ${(reference / 20).toFixed(0)} ms (${us(reference / 20 / STEPS)} a step); ` +
    `${STEPS} × the floor p50: small frame ${(STEPS * p50(smallFloor)).toFixed(0)} ms, a step's frames ${(STEPS * floorP50).toFixed(0)} ms; ` +
    `${STEPS} × the raw server p50 ${(STEPS * p50(probes.raw)).toFixed(0)} ms`,
);
echo.close();
rawServer.close();
await tk.close();
