import { accessSync, constants, existsSync, statSync } from "node:fs";
import { delimiter, dirname, isAbsolute, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { BinaryNotFoundError } from "./errors.js";

const EXECUTABLE = process.platform === "win32" ? "threadkeeper.exe" : "threadkeeper";

export interface FindBinaryOptions {
  /** An explicit path (or a bare name looked up on PATH). */
  binary?: string;
  env?: NodeJS.ProcessEnv;
  /** Where to start walking up for a checkout's `Cargo.toml`; defaults to this package's folder. */
  startDir?: string;
}

function isExecutableFile(path: string): boolean {
  try {
    if (!statSync(path).isFile()) return false;
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

function onPath(name: string, env: NodeJS.ProcessEnv): string | undefined {
  for (const dir of (env.PATH ?? "").split(delimiter)) {
    if (dir === "") continue;
    const candidate = join(dir, name);
    if (isExecutableFile(candidate)) return candidate;
  }
  return undefined;
}

function checkoutCandidates(startDir: string, env: NodeJS.ProcessEnv): string[] {
  const candidates: string[] = [];
  if (env.CARGO_TARGET_DIR) candidates.push(join(resolve(env.CARGO_TARGET_DIR), "release", EXECUTABLE));
  let dir = resolve(startDir);
  for (;;) {
    if (existsSync(join(dir, "Cargo.toml"))) candidates.push(join(dir, "target", "release", EXECUTABLE));
    const parent = dirname(dir);
    if (parent === dir) break;
    dir = parent;
  }
  return candidates;
}

/** This package's folder (the parent of `dist/` or `src/`). */
function packageDir(): string {
  return dirname(dirname(fileURLToPath(import.meta.url)));
}

function resolveNamed(value: string, env: NodeJS.ProcessEnv, origin: string, searched: string[]): string {
  const looksLikePath = isAbsolute(value) || value.includes("/") || value.includes("\\");
  const found = looksLikePath ? (isExecutableFile(resolve(value)) ? resolve(value) : undefined) : onPath(value, env);
  searched.push(`${origin}=${value}`);
  if (found) return found;
  throw new BinaryNotFoundError(
    `threadkeeper binary not found: ${origin} is ${JSON.stringify(value)}, which is not an executable file` +
      (looksLikePath ? "" : " on PATH") +
      ". Build it with `cargo build --release` in the threadkeeper repository " +
      "(it lands in target/release/threadkeeper).",
    searched,
  );
}

/**
 * Finds the server binary: the explicit `binary`, then `THREADKEEPER_BIN`, then `threadkeeper`
 * on PATH, then `target/release/threadkeeper` of the checkout this package sits in.
 */
export function findBinary(options: FindBinaryOptions = {}): string {
  const env = options.env ?? process.env;
  const searched: string[] = [];
  if (options.binary) return resolveNamed(options.binary, env, "the binary option", searched);
  if (env.THREADKEEPER_BIN) return resolveNamed(env.THREADKEEPER_BIN, env, "THREADKEEPER_BIN", searched);

  const fromPath = onPath(EXECUTABLE, env);
  searched.push(`PATH (${EXECUTABLE})`);
  if (fromPath) return fromPath;

  for (const candidate of checkoutCandidates(options.startDir ?? packageDir(), env)) {
    searched.push(candidate);
    if (isExecutableFile(candidate)) return candidate;
  }
  throw new BinaryNotFoundError(
    "threadkeeper binary not found. Looked at: " +
      searched.join(", ") +
      ". Build it with `cargo build --release` in the threadkeeper repository, " +
      "then pass { binary } to ThreadKeeper.spawn, set THREADKEEPER_BIN, or put it on PATH.",
    searched,
  );
}
