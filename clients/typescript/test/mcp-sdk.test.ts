/**
 * `threadkeeper mcp` driven by the official MCP TypeScript SDK's client, as an agent host drives
 * it: StdioClientTransport spawns the binary, Client negotiates (`initialize`), lists the tools
 * and resources, searches, reads a 10,000-event thread in token-bounded pages, and is refused
 * imports outside the allowed directories and any write when imports are not allowed at all.
 * The Python SDK's counterpart is clients/python/tests/test_mcp_sdk.py.
 */
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ThreadKeeper } from "../src/index.js";
import { BINARY } from "./helpers.js";

const EVENTS = 10_000;
/** Every exchange is bounded: a hung server fails the test instead of hanging it. */
const TIMEOUT_MS = 60_000;

let dir: string;
let store: string;

/** A long thread in a SQLite file, written through the protocol server. */
async function writeThread(): Promise<void> {
  const writer = await ThreadKeeper.spawn({ binary: BINARY, args: ["--store", store], clientInfo: { name: "mcp-sdk-test" } });
  try {
    const thread = await writer.openThread({ threadId: "long" });
    const events = Array.from({ length: EVENTS }, (_, i) => ({
      type: "message" as const,
      role: i % 2 === 0 ? ("user" as const) : ("assistant" as const),
      content: `turn ${i}: ${i === 4_321 ? "the needle " : ""}${"words ".repeat(12)}`,
      iteration: Math.floor(i / 2),
    }));
    await thread.append(events);
  } finally {
    await writer.close();
  }
}

async function connect(extraArgs: string[] = []): Promise<Client> {
  const transport = new StdioClientTransport({
    command: BINARY,
    args: ["mcp", "--store", store, ...extraArgs],
    env: { ...(process.env as Record<string, string>), RUST_LOG: "warn" },
    stderr: "ignore",
  });
  const client = new Client({ name: "threadkeeper-js-tests", version: "1.0.0" });
  await client.connect(transport, { timeout: TIMEOUT_MS });
  return client;
}

interface ReadPage {
  text: string;
  tokens: number;
  fromEvent: number;
  nextEvent?: number;
  eventCount: number;
  truncated: boolean;
  cutEvent?: number;
}

async function callTool(client: Client, name: string, args: Record<string, unknown>) {
  return client.callTool({ name, arguments: args }, undefined, { timeout: TIMEOUT_MS });
}

before(async () => {
  dir = mkdtempSync(join(tmpdir(), "threadkeeper-mcp-"));
  store = `sqlite:${join(dir, "threads.db")}`;
  await writeThread();
});
after(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe("the official MCP TypeScript SDK client", () => {
  test("initializes, lists tools and resources, and searches", async () => {
    const client = await connect();
    try {
      assert.equal(client.getServerVersion()?.name, "threadkeeper");
      const tools = await client.listTools(undefined, { timeout: TIMEOUT_MS });
      assert.deepEqual(tools.tools.map((t) => t.name).sort(), ["get_event", "list_threads", "read_thread", "search_threads"]);
      assert.ok(tools.tools.every((t) => t.outputSchema !== undefined));
      const resources = await client.listResources(undefined, { timeout: TIMEOUT_MS });
      assert.deepEqual(resources.resources.map((r) => r.uri), ["thread://long"]);
      const found = await callTool(client, "search_threads", { query: "needle" });
      assert.ok(!found.isError, JSON.stringify(found));
      const hits = (found.structuredContent as { hits: { threadId: string; eventIndex: number; snippet: string }[] }).hits;
      assert.deepEqual(hits.map((h) => [h.threadId, h.eventIndex]), [["long", 4_321]]);
      assert.match(hits[0]!.snippet, /«needle»/);
      const malformed = await callTool(client, "search_threads", { query: '"needle' });
      assert.equal(malformed.isError, true);
    } finally {
      await client.close();
    }
  });

  test("reads a 10,000-event thread in pages within the token bound, every event once", async () => {
    const client = await connect();
    try {
      const maxTokens = 4_000;
      const seen: number[] = [];
      let fromEvent = 0;
      let pages = 0;
      for (;;) {
        const result = await callTool(client, "read_thread", { threadId: "long", fromEvent, maxTokens });
        assert.ok(!result.isError, JSON.stringify(result));
        const page = result.structuredContent as unknown as ReadPage;
        assert.ok(page.tokens <= maxTokens, `page from ${fromEvent}: ${page.tokens} tokens`);
        assert.equal(page.eventCount, EVENTS);
        assert.equal(page.cutEvent, undefined, "no event is cut: each fits a page whole");
        assert.equal(page.truncated, page.nextEvent !== undefined);
        for (const line of page.text.split("\n")) {
          if (line.startsWith("#")) seen.push(Number(line.slice(1, line.indexOf(" "))));
        }
        pages++;
        if (page.nextEvent === undefined) break;
        assert.ok(page.nextEvent > fromEvent);
        fromEvent = page.nextEvent;
      }
      assert.deepEqual(seen, Array.from({ length: EVENTS }, (_, i) => i));
      assert.ok(pages > 20, `${pages} pages`);
      const missing = await callTool(client, "read_thread", { threadId: "nope" });
      assert.equal(missing.isError, true);
    } finally {
      await client.close();
    }
  });

  test("without --allow-import nothing writes: no import tool, and calling it is refused", async () => {
    const client = await connect();
    try {
      const session = join(dir, "session.jsonl");
      writeFileSync(session, "{}\n");
      const refused = await callTool(client, "import_session", { path: session, format: "claude-code" });
      assert.equal(refused.isError, true);
      assert.match(JSON.stringify(refused.content), /without --allow-import/);
      const listed = await callTool(client, "list_threads", {});
      assert.deepEqual((listed.structuredContent as { threads: { threadId: string }[] }).threads.map((t) => t.threadId), ["long"]);
    } finally {
      await client.close();
    }
  });

  test("with --allow-import, a file outside the allowed directories is refused", async () => {
    const allowed = join(dir, "allowed");
    mkdirSync(allowed, { recursive: true });
    const outside = join(dir, "outside.jsonl");
    writeFileSync(outside, "{}\n");
    const client = await connect(["--allow-import", allowed]);
    try {
      const tools = await client.listTools(undefined, { timeout: TIMEOUT_MS });
      assert.ok(tools.tools.some((t) => t.name === "import_session"));
      for (const path of [outside, join(allowed, "..", "outside.jsonl"), "outside.jsonl"]) {
        const refused = await callTool(client, "import_session", { path, format: "claude-code", threadId: "imported" });
        assert.equal(refused.isError, true, path);
      }
      const listed = await callTool(client, "list_threads", {});
      assert.deepEqual((listed.structuredContent as { threads: { threadId: string }[] }).threads.map((t) => t.threadId), ["long"]);
    } finally {
      await client.close();
    }
  });
});
