import assert from "node:assert/strict";
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { BinaryNotFoundError, ErrorCodes, findBinary, ServerExitedError, ThreadKeeper } from "../src/index.js";
import { BINARY, MEMORY_ARGS, rejectsWithCode, spawnMemory } from "./helpers.js";

describe("lifecycle", () => {
  test("spawn initializes and reports the server", async () => {
    const tk = await spawnMemory();
    try {
      assert.equal(tk.server.serverInfo.name, "threadkeeper");
      assert.equal(typeof tk.server.serverInfo.version, "string");
      assert.equal(tk.server.protocolVersion, 1);
      assert.equal(tk.server.capabilities.store.kind, "memory");
      assert.deepEqual(tk.server.capabilities.renderFormats, ["xml", "messages", "text", "openai-chat", "openai-responses", "anthropic"]);
      assert.equal(tk.binary, BINARY);
      assert.equal(typeof tk.pid, "number");
    } finally {
      await tk.close();
    }
  });

  test("close runs shutdown and exit: status 0, later calls reject at once", async () => {
    const tk = await spawnMemory();
    const status = await tk.close();
    assert.deepEqual(status, { exitCode: 0, signal: null });
    const error = await rejectsWithCode(tk.escapeXml("x"), ErrorCodes.ServerExited);
    assert.match(error.message, /closed/);
    assert.deepEqual(await tk.close(), { exitCode: 0, signal: null }, "close twice is harmless");
  });

  test("a second initialize is refused with -32600", async () => {
    const tk = await spawnMemory();
    try {
      await rejectsWithCode(tk.call("initialize", {}), ErrorCodes.InvalidRequest);
    } finally {
      await tk.close();
    }
  });

  test("unknown methods are -32601 ThreadKeeperErrors", async () => {
    const tk = await spawnMemory();
    try {
      const error = await rejectsWithCode(tk.call("thread/frobnicate", {}), ErrorCodes.MethodNotFound);
      assert.ok(error.message.length > 0);
    } finally {
      await tk.close();
    }
  });

  test("a server that rejects its arguments fails spawn with its status and stderr", async () => {
    const started = Date.now();
    await assert.rejects(ThreadKeeper.spawn({ binary: BINARY, args: ["--no-such-flag"] }), (error: unknown) => {
      assert.ok(error instanceof ServerExitedError, String(error));
      assert.equal(error.code, ErrorCodes.ServerExited);
      assert.equal(error.exitCode, 2);
      assert.match(error.stderr, /--no-such-flag/);
      assert.match(error.message, /exited with status 2/);
      assert.match(error.message, /--no-such-flag/);
      return true;
    });
    assert.ok(Date.now() - started < 5000, "fails promptly");
  });
});

describe("binary discovery", () => {
  const dir = mkdtempSync(join(tmpdir(), "tk-discovery-"));
  after(() => rmSync(dir, { recursive: true, force: true }));

  function fakeExecutable(path: string): string {
    mkdirSync(join(path, ".."), { recursive: true });
    writeFileSync(path, "#!/bin/sh\nexit 0\n");
    chmodSync(path, 0o755);
    return path;
  }

  test("explicit binary wins over THREADKEEPER_BIN and PATH", () => {
    const explicit = fakeExecutable(join(dir, "explicit", "tk"));
    const fromEnv = fakeExecutable(join(dir, "env", "tk"));
    const onPath = fakeExecutable(join(dir, "path", "threadkeeper"));
    const env = { THREADKEEPER_BIN: fromEnv, PATH: join(dir, "path") };
    assert.equal(findBinary({ binary: explicit, env }), explicit);
    assert.equal(findBinary({ env }), fromEnv);
    assert.equal(findBinary({ env: { PATH: join(dir, "path") } }), onPath);
  });

  test("falls back to target/release of the checkout above the package", () => {
    const repo = join(dir, "repo");
    mkdirSync(repo, { recursive: true });
    writeFileSync(join(repo, "Cargo.toml"), "[package]\n");
    const built = fakeExecutable(join(repo, "target", "release", "threadkeeper"));
    const packageDir = join(repo, "clients", "typescript");
    mkdirSync(packageDir, { recursive: true });
    assert.equal(findBinary({ env: { PATH: "" }, startDir: packageDir }), built);
  });

  test("a missing binary says how to build it", () => {
    const empty = join(dir, "nothing-here");
    mkdirSync(empty, { recursive: true });
    assert.throws(
      () => findBinary({ env: { PATH: empty }, startDir: empty }),
      (error: unknown) => {
        assert.ok(error instanceof BinaryNotFoundError);
        assert.equal(error.code, ErrorCodes.BinaryNotFound);
        assert.match(error.message, /cargo build --release/);
        assert.match(error.message, /THREADKEEPER_BIN/);
        return true;
      },
    );
    assert.throws(() => findBinary({ binary: join(empty, "threadkeeper"), env: {} }), /cargo build --release/);
    assert.throws(() => findBinary({ env: { THREADKEEPER_BIN: join(empty, "nope"), PATH: "" } }), /THREADKEEPER_BIN/);
  });

  test("spawn uses THREADKEEPER_BIN from the given env", async () => {
    const copy = join(dir, "copy", "threadkeeper-copy");
    mkdirSync(join(dir, "copy"), { recursive: true });
    copyFileSync(BINARY, copy);
    chmodSync(copy, 0o755);
    const tk = await ThreadKeeper.spawn({ env: { ...process.env, THREADKEEPER_BIN: copy }, args: MEMORY_ARGS });
    try {
      assert.equal(tk.binary, copy);
      assert.equal(await tk.escapeXml("<"), "&lt;");
    } finally {
      await tk.close();
    }
  });
});
