import { accessSync, constants, existsSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import { delimiter, dirname, isAbsolute, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { BinaryNotFoundError } from "./errors.js";

const EXECUTABLE = process.platform === "win32" ? "threadkeeper.exe" : "threadkeeper";

const BUILD_HINT =
  "Install threadkeeper with its optional dependencies (npm installs the package holding this platform's " +
  "binary unless they are omitted), or build the server with `cargo build --release` in the threadkeeper " +
  "repository (it lands in target/release/threadkeeper)";

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

/**
 * The npm packages that can carry this platform's binary (the `optionalDependencies` of this
 * package; npm installs the one whose `os`/`cpu`/`libc` match).
 */
export function platformPackageNames(platform: string = process.platform, arch: string = process.arch): string[] {
  if (platform !== "linux") return [`threadkeeper-${platform}-${arch}`];
  return [`threadkeeper-linux-${arch}-gnu`, `threadkeeper-linux-${arch}-musl`];
}

/** glibc or musl (asked only when both Linux packages are installed: the report takes ~10 ms). */
function runsOnGlibc(): boolean {
  const report = process.report?.getReport() as { header?: { glibcVersionRuntime?: string } } | undefined;
  return Boolean(report?.header?.glibcVersionRuntime);
}

/** The binary of an installed platform package, as seen from this package's location. */
function bundledBinary(searched: string[]): string | undefined {
  const require = createRequire(import.meta.url);
  const installed: string[] = [];
  for (const name of platformPackageNames()) {
    searched.push(`the ${name} package`);
    try {
      const candidate = join(dirname(require.resolve(`${name}/package.json`)), "bin", EXECUTABLE);
      if (isExecutableFile(candidate)) installed.push(candidate);
    } catch {
      // not installed: npm skipped it for this platform, or optional dependencies were omitted
    }
  }
  // An npm that ignores `libc` installs both: a gnu build does not start on musl, while the
  // static musl build runs on both.
  if (installed.length > 1) return runsOnGlibc() ? installed[0] : installed[1];
  return installed[0];
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
      `. ${BUILD_HINT}.`,
    searched,
  );
}

/**
 * Finds the server binary: the explicit `binary`, then `THREADKEEPER_BIN` (an override, as a
 * developer testing another build wants it), then the binary bundled in this platform's package
 * (`threadkeeper-<os>-<cpu>[-<libc>]`, installed with this one), then `threadkeeper` on PATH,
 * then `target/release/threadkeeper` of the checkout this package sits in.
 */
export function findBinary(options: FindBinaryOptions = {}): string {
  const env = options.env ?? process.env;
  const searched: string[] = [];
  if (options.binary) return resolveNamed(options.binary, env, "the binary option", searched);
  if (env.THREADKEEPER_BIN) return resolveNamed(env.THREADKEEPER_BIN, env, "THREADKEEPER_BIN", searched);

  const bundled = bundledBinary(searched);
  if (bundled) return bundled;

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
      `. ${BUILD_HINT}; or pass { binary } to ThreadKeeper.spawn, set THREADKEEPER_BIN, or put it on PATH.`,
    searched,
  );
}
