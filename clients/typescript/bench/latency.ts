/**
 * A small call through the client against the floor under it: the same bytes written to an
 * echo process (`cat`) over the same kind of pipes and read back, from the same event loop.
 * The ratio of the p50s is what the client and the server add to a raw pipe round trip.
 *
 *   THREADKEEPER_BIN=target/release/threadkeeper npm run bench:latency
 *
 * Each peer is called in blocks of BENCH_BLOCK calls (default 50), the blocks rotating within
 * each round, so load on the machine still falls on all alike while one server at a time is
 * driven, as a host drives its one server (the others have stopped polling their stdin and
 * sleep). BENCH_ORDER=calls interleaves call by call instead, the earlier way: every server
 * then polls after each answer while node drives the other peers, three to five runnable
 * processes on the cores a host would give one.
 *
 * With THREADKEEPER_BENCH_BEFORE=<another build of the server> the raw round trip and the client
 * call run against both builds, in the same rounds, and both are reported. With
 * THREADKEEPER_BENCH_CLIENT_BEFORE=<another build of this client: its compiled index.js> the
 * client call runs through both client builds (against this server build), in the same rounds.
 *
 * Where the processes run decides the echo more than anything measured: `cat` woken on node's
 * core answers in about 15 µs, on the other core of a small virtual machine in 50-70 µs, and the
 * kernel picks one or the other for the whole run. So the run fixes the placement with `taskset`
 * (Linux), BENCH_PLACEMENT:
 *   one-core (default)  node and every peer on one CPU: the pipe's fastest round trip, the
 *                       strictest floor, the same in every run;
 *   split               node on one CPU, every peer on another;
 *   free                wherever the kernel puts them (the earlier runs).
 */
import { execFileSync, spawn as spawnProcess } from "node:child_process";
import { availableParallelism } from "node:os";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { ThreadKeeper } from "../src/index.js";
import { encodeFrame } from "../src/framing.js";

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 20);
const PER_ROUND = Number(process.env.BENCH_PER_ROUND ?? 250);
const ORDER = process.env.BENCH_ORDER === "calls" ? "calls" : "blocks";
const BLOCK = Math.max(1, Number(process.env.BENCH_BLOCK ?? 50));
const WARMUP = Number(process.env.BENCH_WARMUP ?? 3000);
const PLACEMENT = placement(process.env.BENCH_PLACEMENT ?? "one-core");

function placement(asked: string): "one-core" | "split" | "free" {
  if (asked !== "one-core" && asked !== "split" && asked !== "free") throw new Error(`BENCH_PLACEMENT: one-core, split or free, not ${JSON.stringify(asked)}`);
  if (asked === "free") return asked;
  if (process.platform !== "linux" || availableParallelism() < 2) {
    console.log(`BENCH_PLACEMENT=${asked} needs Linux with two CPUs: running free`);
    return "free";
  }
  return asked;
}

/** Puts every thread of process `pid` on CPU `cpu` (children spawned later inherit it). */
function pin(pid: number | undefined, cpu: number): void {
  if (pid === undefined) throw new Error("a peer without a process id cannot be placed");
  execFileSync("taskset", ["--all-tasks", "--pid", "--cpu-list", String(cpu), String(pid)], { stdio: "ignore" });
}

const NODE_CPU = 0;
const PEER_CPU = PLACEMENT === "split" ? 1 : NODE_CPU;
if (PLACEMENT !== "free") pin(process.pid, NODE_CPU);

/** Places a peer's process as BENCH_PLACEMENT says. */
function placePeer(pid: number | undefined): void {
  if (PLACEMENT !== "free") pin(pid, PEER_CPU);
}

function p(sorted: number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}

interface RawPeer {
  /** Writes `frame` and resolves when `answerBytes` bytes came back. */
  roundTrip(frame: Buffer, answerBytes: number): Promise<void>;
  close(): void;
}

/** A process driven over bare pipes, with no client library: counts answer bytes, parses nothing. */
function rawPeer(command: string, args: string[]): RawPeer {
  // The same stdio as the client gives the server (stderr a pipe too), so the only difference is the client.
  const peer = spawnProcess(command, args, { stdio: ["pipe", "pipe", "pipe"] });
  placePeer(peer.pid);
  peer.stderr.resume();
  let waiting = 0;
  let done: (() => void) | undefined;
  peer.stdout.on("data", (chunk: Buffer) => {
    waiting -= chunk.length;
    if (waiting <= 0 && done) {
      const resolve = done;
      done = undefined;
      resolve();
    }
  });
  return {
    roundTrip(frame, answerBytes) {
      waiting = answerBytes;
      return new Promise<void>((resolve) => {
        done = resolve;
        peer.stdin.write(frame);
      });
    },
    close: () => peer.stdin.end(),
  };
}

function stats(name: string, samples: number[], floor?: number): number {
  samples.sort((a, b) => a - b);
  const p50 = p(samples, 0.5);
  const ratio = floor === undefined ? "" : `, ${(p50 / floor).toFixed(2)}× the echo`;
  console.log(`${name.padEnd(44)} p50 ${p50.toFixed(1)} µs, p99 ${p(samples, 0.99).toFixed(0)} µs${ratio}`);
  return p50;
}

// THREADKEEPER_BENCH_BEFORE: a second server binary (say, the build before a change), measured in
// the same rounds, so that before and after are compared under the same load.
const before = process.env.THREADKEEPER_BENCH_BEFORE;
/** A client (this build's, or `client`: another build's) and its server, placed like every other peer. */
async function spawnClient(binary?: string, client: typeof ThreadKeeper = ThreadKeeper): Promise<ThreadKeeper> {
  const tk = await client.spawn({ binary, args: ["--store", "memory"] });
  placePeer(tk.pid);
  return tk;
}
const tk = await spawnClient();
const builds = [{ label: before ? "after: " : "", tk, server: rawPeer(tk.binary, ["--store", "memory"]) }];
if (before) {
  const old = await spawnClient(before);
  builds.unshift({ label: "before: ", tk: old, server: rawPeer(before, ["--store", "memory"]) });
}
// THREADKEEPER_BENCH_CLIENT_BEFORE: a second build of this client (its compiled index.js, say
// from a checkout of the commit before a change), calling the same server build as the client.
const clientBefore = process.env.THREADKEEPER_BENCH_CLIENT_BEFORE;
const otherClients: { label: string; tk: ThreadKeeper }[] = [];
if (clientBefore) {
  const module = (await import(pathToFileURL(resolve(clientBefore)).href)) as { ThreadKeeper: typeof ThreadKeeper };
  otherClients.push({ label: "client before: ", tk: await spawnClient(tk.binary, module.ThreadKeeper) });
}
const echo = rawPeer("cat", []);
for (const { label, tk } of builds) {
  console.log(`${label}server ${tk.server.serverInfo.version} at ${tk.binary}; node ${process.version}`);
}
if (clientBefore) console.log(`client before: ${clientBefore}`);

// The request bytes the client sends for escapeXml("a < b & 1234"), and the server's answer.
const frame = encodeFrame(JSON.stringify({ jsonrpc: "2.0", id: 1234, method: "xml/escape", params: { text: "a < b & 1234" } }));
const answerBytes = encodeFrame(JSON.stringify({ jsonrpc: "2.0", id: 1234, result: { text: "a &lt; b &amp; 1234" } })).length;
const init = encodeFrame(JSON.stringify({ jsonrpc: "2.0", id: 1234, method: "initialize", params: { protocolVersion: 1 } }));
for (const { server } of builds) {
  await new Promise<void>((resolve) => {
    void server.roundTrip(init, 1).then(() => setTimeout(resolve, 100)); // the whole answer, whatever its size
  });
}

const floor: number[] = [];
const measurements: [number[], () => Promise<unknown>][] = [[floor, () => echo.roundTrip(frame, frame.length)]];
const results = builds.map(({ label, tk, server }) => {
  const raw: number[] = [];
  const client: number[] = [];
  measurements.push([raw, () => server.roundTrip(frame, answerBytes)], [client, () => tk.escapeXml("a < b & 1234")]);
  return { label, raw, client };
});
const otherResults = otherClients.map(({ label, tk }) => {
  const client: number[] = [];
  measurements.push([client, () => tk.escapeXml("a < b & 1234")]);
  return { label, client };
});
// Until V8 has compiled every path of a call with its optimizing tiers: with 300 calls the
// client's p50 moved by 20% from run to run and its p99 reached 0.5 ms; a host's client that has
// run for a while is in that steady state.
for (let i = 0; i < WARMUP; i++) {
  await echo.roundTrip(frame, frame.length);
  for (const { tk, server } of builds) {
    await tk.escapeXml("warm <up>");
    await server.roundTrip(frame, answerBytes);
  }
  for (const { tk } of otherClients) await tk.escapeXml("warm <up>");
}
const now = () => process.hrtime.bigint();
/**
 * How fast this CPU runs now: a fixed loop of small stringifications, in ms. A virtual machine's
 * CPU speed drifts (the same loop varies by a quarter from one start to the next with nothing else
 * running), and a slow stretch slows code more than it slows `cat`'s few instructions: printed
 * before and after the rounds, it tells such a run apart.
 */
function cpuCheck(): number {
  const start = now();
  let length = 0;
  for (let i = 0; i < 300_000; i++) length += JSON.stringify({ i, text: "a < b & 1234" }).length;
  if (length === 0) throw new Error("unreachable: keeps the loop from being optimized away");
  return Number(now() - start) / 1e6;
}
const cpuBefore = cpuCheck();
const kinds = measurements.length;
async function timeCalls(k: number, calls: number): Promise<void> {
  const [samples, roundTrip] = measurements[k % kinds]!;
  for (let c = 0; c < calls; c++) {
    const start = now();
    await roundTrip();
    samples.push(Number(now() - start) / 1000);
  }
}
for (let round = 0; round < ROUNDS; round++) {
  if (ORDER === "calls") {
    for (let i = 0; i < PER_ROUND; i++) {
      // Each takes each place in turn, so none always runs right after the same other one.
      for (let k = 0; k < kinds; k++) await timeCalls(i + k, 1);
    }
  } else {
    for (let b = 0; b * BLOCK < PER_ROUND; b++) {
      for (let k = 0; k < kinds; k++) await timeCalls(round + b + k, Math.min(BLOCK, PER_ROUND - b * BLOCK));
    }
  }
}
const where = { "one-core": `node and every peer on CPU ${NODE_CPU}`, split: `node on CPU ${NODE_CPU}, every peer on CPU ${PEER_CPU}`, free: "placed by the kernel" }[PLACEMENT];
console.log(`CPU check (a fixed loop): ${cpuBefore.toFixed(0)} ms before the rounds, ${cpuCheck().toFixed(0)} ms after`);
console.log(`${floor.length} round trips each, ${ORDER === "calls" ? "interleaved call by call" : `in rotating blocks of ${BLOCK}`}, ${where}:`);
const echoP50 = stats("raw pipe echo (cat)", floor);
for (const { label, raw, client } of results) {
  const rawP50 = stats(`${label}raw pipe to the server (no client)`, raw, echoP50);
  const clientP50 = stats(`${label}client xml/escape`, client, echoP50);
  console.log(`${label}the client's own share: ${(clientP50 / rawP50).toFixed(2)}× the raw server round trip`);
}
for (const { label, client } of otherResults) stats(`${label}client xml/escape`, client, echoP50);
echo.close();
for (const { tk, server } of builds) {
  server.close();
  await tk.close();
}
for (const { tk } of otherClients) await tk.close();
