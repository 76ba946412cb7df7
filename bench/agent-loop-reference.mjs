// The agent-loop scenario in-process with the Node reference serializer: every step appends
// four events and re-serializes the whole thread, as upstream hosts do.
// Usage: node bench/agent-loop-reference.mjs EVENTS.json
import { readFileSync } from "node:fs";
import { serializeThreadToXml } from "./reference/xml-serializer.mjs";

const events = JSON.parse(readFileSync(process.argv[2], "utf8"));
const thread = [];
const perStep = [];
const start = process.hrtime.bigint();
let length = 0;
for (let i = 0; i < events.length; i += 4) {
  const t = process.hrtime.bigint();
  thread.push(...events.slice(i, i + 4));
  length = serializeThreadToXml(thread).length;
  perStep.push(Number(process.hrtime.bigint() - t) / 1e3);
}
const totalMs = Number(process.hrtime.bigint() - start) / 1e6;
const avg = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;
console.log(
  `Node reference: ${perStep.length} steps in ${(totalMs / 1e3).toFixed(3)} s, ` +
    `steps 1-100 ${avg(perStep.slice(0, 100)).toFixed(1)} µs avg, ` +
    `steps 901-1000 ${avg(perStep.slice(-100)).toFixed(1)} µs avg; final document ${(length / 1024) | 0} kB total_ms=${totalMs.toFixed(1)}`,
);
