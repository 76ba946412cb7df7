// Counts the corpora benches/tokens.rs wrote (THREADKEEPER_TOKENS_CORPUS) with js-tiktoken,
// which embeds its vocabularies as the Rust crates do, and prints MB/s per encoding and text:
//   node bench.mjs DIR
import { readFileSync } from "node:fs";
import { getEncoding } from "js-tiktoken";

const dir = process.argv[2];
if (!dir) {
  console.error("usage: node bench.mjs CORPUS_DIR");
  process.exit(2);
}
const MIN_SECONDS = 3;

for (const name of ["o200k_base", "cl100k_base"]) {
  const encoding = getEncoding(name);
  for (const corpus of ["xml", "text"]) {
    const text = readFileSync(`${dir}/${corpus}.txt`, "utf8");
    const bytes = Buffer.byteLength(text, "utf8");
    const tokens = encoding.encode(text).length; // warm-up, and the count to compare
    let runs = 0;
    const start = process.hrtime.bigint();
    let seconds = 0;
    while (seconds < MIN_SECONDS || runs < 3) {
      encoding.encode(text);
      runs += 1;
      seconds = Number(process.hrtime.bigint() - start) / 1e9;
    }
    const mbPerSecond = (bytes * runs) / seconds / 1e6;
    console.log(`js-tiktoken/${name}\t${corpus}\t${mbPerSecond.toFixed(1)} MB/s\t${tokens} tokens`);
  }
}
