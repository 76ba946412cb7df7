#!/usr/bin/env node
// Stages the npm packages in folders ready for `npm pack` / `npm publish`:
//   stage.mjs main OUT_DIR                      the `threadkeeper` client package, built dist/ included,
//                                               with one optional dependency per platform package
//   stage.mjs platform RUST_TARGET BINARY OUT_DIR
//                                               the package holding that target's server binary
//   stage.mjs name RUST_TARGET                  prints the platform package's name
// The platform list below is the one the release workflow builds; the client's discovery derives
// the same names from process.platform/arch and the C library.
import { chmodSync, copyFileSync, cpSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const repo = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");
const client = join(repo, "clients", "typescript");

/** Rust target → npm `os`, `cpu` and (Linux) `libc`. */
const TARGETS = {
  "x86_64-unknown-linux-gnu": { os: "linux", cpu: "x64", libc: "glibc" },
  "aarch64-unknown-linux-gnu": { os: "linux", cpu: "arm64", libc: "glibc" },
  "x86_64-unknown-linux-musl": { os: "linux", cpu: "x64", libc: "musl" },
  "aarch64-unknown-linux-musl": { os: "linux", cpu: "arm64", libc: "musl" },
  "x86_64-apple-darwin": { os: "darwin", cpu: "x64" },
  "aarch64-apple-darwin": { os: "darwin", cpu: "arm64" },
  "x86_64-pc-windows-msvc": { os: "win32", cpu: "x64" },
};

function fail(message) {
  console.error(`stage.mjs: ${message}`);
  process.exit(2);
}

function platformOf(target) {
  const platform = TARGETS[target];
  if (!platform) fail(`unknown Rust target ${JSON.stringify(target)}; known: ${Object.keys(TARGETS).join(", ")}`);
  return platform;
}

function packageName({ os, cpu, libc }) {
  const suffix = libc === undefined ? "" : libc === "glibc" ? "-gnu" : "-musl";
  return `threadkeeper-${os}-${cpu}${suffix}`;
}

function clientManifest() {
  return JSON.parse(readFileSync(join(client, "package.json"), "utf8"));
}

function freshDir(dir) {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
}

const LICENSES = ["LICENSE-MIT", "LICENSE-APACHE"];

function copyLicenses(out) {
  for (const file of LICENSES) copyFileSync(join(repo, file), join(out, file));
}

function stageMain(out) {
  const manifest = clientManifest();
  if (!existsSync(join(client, "dist", "index.js"))) fail(`${client}/dist is not built: run \`npm run build\` there`);
  // What a user installs needs neither the build scripts nor the dev tools.
  delete manifest.scripts;
  delete manifest.devDependencies;
  manifest.optionalDependencies = Object.fromEntries(
    Object.values(TARGETS).map((platform) => [packageName(platform), manifest.version]),
  );
  freshDir(out);
  for (const entry of manifest.files) cpSync(join(client, entry), join(out, entry), { recursive: true });
  copyLicenses(out);
  manifest.files = [...manifest.files, ...LICENSES];
  writeFileSync(join(out, "package.json"), JSON.stringify(manifest, null, 2) + "\n");
}

function stagePlatform(target, binary, out) {
  const platform = platformOf(target);
  const name = packageName(platform);
  const { version, license } = clientManifest();
  const executable = platform.os === "win32" ? "threadkeeper.exe" : "threadkeeper";
  if (!existsSync(binary)) fail(`no binary at ${binary}`);
  freshDir(join(out, "bin"));
  copyFileSync(binary, join(out, "bin", executable));
  chmodSync(join(out, "bin", executable), 0o755);
  copyLicenses(out);
  const manifest = {
    name,
    version,
    description: `The threadkeeper server binary for ${target}; installed by the threadkeeper package.`,
    license,
    os: [platform.os],
    cpu: [platform.cpu],
    ...(platform.libc ? { libc: [platform.libc] } : {}),
    files: ["bin", ...LICENSES],
    preferUnplugged: true,
  };
  writeFileSync(join(out, "package.json"), JSON.stringify(manifest, null, 2) + "\n");
  writeFileSync(
    join(out, "README.md"),
    `# ${name}\n\nThe \`threadkeeper\` server binary for ${target}. The \`threadkeeper\` package depends on it ` +
      "optionally and runs it; install that one instead.\n",
  );
}

const [command, ...args] = process.argv.slice(2);
if (command === "main" && args.length === 1) stageMain(resolve(args[0]));
else if (command === "platform" && args.length === 3) stagePlatform(args[0], resolve(args[1]), resolve(args[2]));
else if (command === "name" && args.length === 1) console.log(packageName(platformOf(args[0])));
else fail("usage: stage.mjs main OUT_DIR | platform RUST_TARGET BINARY OUT_DIR | name RUST_TARGET");
