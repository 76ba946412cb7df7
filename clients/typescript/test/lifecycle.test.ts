import assert from "node:assert/strict";
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { spawn as spawnProcess } from "node:child_process";
import {
  BinaryNotFoundError,
  CancelledError,
  ErrorCodes,
  findBinary,
  ServerExitedError,
  spawn,
  ThreadKeeper,
  TimeoutError,
} from "../src/index.js";
import { BINARY, loopEvents, MEMORY_ARGS, rejectsWithCode, spawnMemory, freeze } from "./helpers.js";

describe("lifecycle", () => {
  test("spawn initializes and reports the server", async () => {
    const tk = await spawnMemory();
    try {
      assert.equal(tk.server.serverInfo.name, "threadkeeper");
      assert.equal(typeof tk.server.serverInfo.version, "string");
      assert.equal(tk.server.protocolVersion, 1);
      assert.equal(tk.server.capabilities.store.kind, "memory");
      assert.deepEqual(tk.server.capabilities.renderFormats, ["xml", "messages", "text", "openai-chat", "openai-responses", "anthropic", "ai-sdk", "pydantic-ai", "gemini", "bedrock-converse"]);
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

describe("calls: signal, timeout, disposal, idle process", () => {
  test("an aborted call rejects at once with an AbortError (-32800) carrying the reason", async () => {
    await using tk = await spawnMemory();
    const thread = await tk.openThread();
    await thread.append(loopEvents(8000));
    const controller = new AbortController();
    const render = thread.renderXml({ signal: controller.signal });
    controller.abort(new Error("user pressed stop"));
    await assert.rejects(render, (error: unknown) => {
      assert.ok(error instanceof CancelledError, String(error));
      assert.equal(error.name, "AbortError");
      assert.equal(error.code, ErrorCodes.Cancelled);
      assert.match(String((error.reason as Error).message), /user pressed stop/);
      return true;
    });
    // Already aborted: nothing is sent.
    await rejectsWithCode(tk.listThreads({ signal: AbortSignal.abort() }), ErrorCodes.Cancelled);
    assert.equal(await tk.escapeXml("<", { signal: new AbortController().signal }), "&lt;");
  });

  test("timeoutMs cancels a call that takes longer; other calls and the connection go on", async () => {
    await using tk = await spawnMemory();
    const thread = await tk.openThread();
    await thread.append(loopEvents(4000));
    await freeze(tk.pid!); // the server cannot answer in time
    try {
      await assert.rejects(thread.renderXml({ timeoutMs: 30 }), (error: unknown) => {
        assert.ok(error instanceof TimeoutError, String(error));
        assert.equal(error.code, ErrorCodes.Cancelled);
        assert.equal(error.timeoutMs, 30);
        assert.match(error.message, /thread\/render did not answer within 30 ms/);
        return true;
      });
    } finally {
      process.kill(tk.pid!, "SIGCONT");
    }
    // The late answer (or -32800) to the abandoned call is dropped; new calls match their own.
    assert.equal(await tk.escapeXml("&", { timeoutMs: 10_000 }), "&amp;");
    assert.equal((await thread.eventsPage({ limit: 1 })).eventCount, 4000);
  });

  test("a client-wide timeoutMs applies to calls that give none", async () => {
    await using tk = await ThreadKeeper.spawn({ binary: BINARY, args: MEMORY_ARGS, timeoutMs: 30 });
    await freeze(tk.pid!);
    try {
      await rejectsWithCode(tk.escapeXml("x"), ErrorCodes.Cancelled);
    } finally {
      process.kill(tk.pid!, "SIGCONT");
    }
    assert.equal(await tk.escapeXml("<", { timeoutMs: 10_000 }), "&lt;");
  });

  test("await using closes the server at the end of the block", async () => {
    let kept: ThreadKeeper | undefined;
    {
      await using tk = await spawn({ binary: BINARY, args: MEMORY_ARGS });
      kept = tk;
      assert.equal(await tk.escapeXml("<"), "&lt;");
    }
    assert.deepEqual(await kept.exited, { exitCode: 0, signal: null });
    await rejectsWithCode(kept.escapeXml("x"), ErrorCodes.ServerExited);
  });

  // A client that kept Node alive would make the script hang: the timeout turns that into a failure.
  test("an idle client does not keep Node running: a script that never calls close() exits", { timeout: 30_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), "tk-idle-"));
    try {
      const script = join(dir, "forgets-close.mjs");
      const index = new URL("../src/index.js", import.meta.url).href;
      writeFileSync(
        script,
        `import { spawn } from ${JSON.stringify(index)};
const tk = await spawn({ binary: ${JSON.stringify(BINARY)}, args: ["--store", "memory"] });
const thread = await tk.openThread();
await thread.append([{ type: "message", role: "user", content: "hi", iteration: 0 }]);
console.log(JSON.stringify({ pid: tk.pid, xml: await thread.renderXml() }));
`,
      );
      const child = spawnProcess(process.execPath, [script], { stdio: ["ignore", "pipe", "inherit"] });
      let out = "";
      child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
      const exitCode = await new Promise<number | null>((resolve) => child.on("close", resolve));
      assert.equal(exitCode, 0, `the script exits on its own (stdout: ${out})`);
      const { pid, xml } = JSON.parse(out) as { pid: number; xml: string };
      assert.match(xml, /content|hi/);
      // The server saw its stdin close and ended too.
      await waitUntil(() => !isAlive(pid));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Polls `condition` (no wall-clock assertion: the test runner's own timeout bounds it). */
async function waitUntil(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 20));
}

describe("params that are not JSON", () => {
  test("a cycle or a BigInt rejects the call (-32602, nothing sent); the connection goes on", async () => {
    await using tk = await spawnMemory();
    const cycle: Record<string, unknown> = {};
    cycle.self = cycle;
    const error = await rejectsWithCode(tk.call("xml/escape", cycle), ErrorCodes.InvalidParams);
    assert.match(error.message, /xml\/escape: the params cannot be sent as JSON/);
    await rejectsWithCode(tk.call("xml/escape", { text: 1n }), ErrorCodes.InvalidParams);
    assert.equal(await tk.escapeXml("<"), "&lt;");
  });
});
