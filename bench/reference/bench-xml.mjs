// Renders a thread (a JSON array of events) with the reference serializer K times.
//
// node bench/reference/bench-xml.mjs THREAD.json K [--out FILE] prints one line, as
// examples/bench_xml.rs does: events=N bytes=B iterations=K ns_per_iter=T min_ns=T0 mb_per_s=M,
// T the median time of one render, T0 the fastest, M = B / T (10^6 bytes of UTF-8 output per s).

import { readFileSync, writeFileSync } from "node:fs";
import { serializeThreadToXml } from "./xml-serializer.mjs";

const [path, k, flag, out] = process.argv.slice(2);
const iterations = Number(k);
if (!path || !(iterations > 0) || (flag !== undefined && (flag !== "--out" || !out))) {
  console.error("usage: bench-xml.mjs THREAD.json ITERATIONS [--out FILE]");
  process.exit(2);
}

const events = JSON.parse(readFileSync(path, "utf8"));
const document = serializeThreadToXml(events); // warm-up
if (out) {
  writeFileSync(out, document);
}
const bytes = Buffer.byteLength(document, "utf8");

// Keep every result reachable through `sink` so the work cannot be skipped; `.length` of a
// concatenated string does not flatten it, so ask for a character at the end as a consumer would.
let sink = 0;
const times = [];
for (let i = 0; i < iterations; i++) {
  const start = process.hrtime.bigint();
  const xml = serializeThreadToXml(events);
  sink += xml.charCodeAt(xml.length - 1);
  times.push(Number(process.hrtime.bigint() - start));
}
if (sink === -1) console.log(sink);
times.sort((a, b) => a - b);
const median = times[Math.floor(times.length / 2)];
const mbPerS = (bytes / median) * 1e3;
console.log(
  `events=${events.length} bytes=${bytes} iterations=${iterations} ns_per_iter=${median} min_ns=${times[0]} mb_per_s=${mbPerS.toFixed(1)}`,
);
