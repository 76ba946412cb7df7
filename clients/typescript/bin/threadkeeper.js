#!/usr/bin/env node
// `npx threadkeeper …`: runs the server binary the client would spawn, with the same arguments,
// stdio and exit status.
import { spawnSync } from "node:child_process";
import { realpathSync } from "node:fs";
import { delimiter, join } from "node:path";
import { fileURLToPath } from "node:url";
import { findBinary } from "../dist/discovery.js";

// node_modules/.bin/threadkeeper is this script: leave its folder out of the PATH search.
const self = realpathSync(fileURLToPath(import.meta.url));
const isSelf = (dir) => {
  try {
    return realpathSync(join(dir, "threadkeeper")) === self;
  } catch {
    return false;
  }
};
const PATH = (process.env.PATH ?? "").split(delimiter).filter((dir) => dir !== "" && !isSelf(dir)).join(delimiter);

let binary;
try {
  binary = findBinary({ env: { ...process.env, PATH } });
} catch (error) {
  console.error(error instanceof Error ? error.message : String(error));
  process.exit(2);
}
const child = spawnSync(binary, process.argv.slice(2), { stdio: "inherit" });
if (child.error) {
  console.error(`threadkeeper: could not run ${binary}: ${child.error.message}`);
  process.exit(2);
}
if (child.signal) process.kill(process.pid, child.signal);
process.exit(child.status ?? 1);
