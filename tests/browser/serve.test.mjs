// Opens `threadkeeper view --serve` in headless Chromium while a separate `threadkeeper serve`
// writes the same SQLite file, and checks what a person watching sees: the thread in the list,
// its events, events appended afterwards arriving without a reload (scroll position and search
// kept), hostile strings inert, no request leaving the server, nothing without the token.
//
//   node serve.test.mjs BINARY OUT_DIR [--readme-screenshot PATH]
import { checks, launchBrowser } from "./harness.mjs";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";

const [binary, outDir, flag, readmeShot] = process.argv.slice(2);
if (!binary || !outDir) {
  console.error("usage: node serve.test.mjs BINARY OUT_DIR [--readme-screenshot PATH]");
  process.exit(64);
}
const shotsDir = join(outDir, "screenshots");
mkdirSync(shotsDir, { recursive: true });
const work = mkdtempSync(join(tmpdir(), "threadkeeper-serve-"));
const store = "sqlite:" + join(work, "threads.db");
const env = { ...process.env };
delete env.THREADKEEPER_STORE;

/** A `threadkeeper serve` on the store, driven over NDJSON. */
function writer() {
  const child = spawn(binary, ["serve", "--store", store], { env, stdio: ["pipe", "pipe", "inherit"] });
  const waiting = new Map();
  createInterface({ input: child.stdout }).on("line", (line) => {
    const message = JSON.parse(line);
    const pending = waiting.get(message.id);
    if (!pending) return;
    waiting.delete(message.id);
    if (message.error) pending.reject(new Error(JSON.stringify(message.error)));
    else pending.resolve(message.result);
  });
  let nextId = 0;
  const call = (method, params) =>
    new Promise((resolve, reject) => {
      const id = ++nextId;
      waiting.set(id, { resolve, reject });
      child.stdin.write(JSON.stringify({ jsonrpc: "2.0", id, method, params }) + "\n");
    });
  return { call, close: () => child.stdin.end() };
}

/** `view --serve`, resolved with its URL (the first line of its stdout). */
function viewer() {
  const child = spawn(binary, ["view", "--serve", "--store", store, "--port", "0"], {
    env,
    stdio: ["ignore", "pipe", "inherit"],
  });
  const exited = new Promise((resolve) => child.on("exit", (code, signal) => resolve({ code, signal })));
  return new Promise((resolve, reject) => {
    child.on("error", reject);
    createInterface({ input: child.stdout }).once("line", (url) => resolve({ child, url, exited }));
  });
}

/** Iterations of a user note, a tool call and its result; the last call is left unanswered. */
function run(iterations) {
  const events = [];
  for (let i = 0; i < iterations; i++) {
    events.push({ type: "message", role: "user", content: "step " + i, iteration: i });
    events.push({ type: "tool_call", toolName: "search", toolCallId: "c" + i, args: { query: "q" + i }, iteration: i });
    if (i < iterations - 1) events.push({ type: "tool_result", toolCallId: "c" + i, result: "hits " + i, iteration: i });
  }
  return events;
}

const thread = writer();
await thread.call("initialize", { clientInfo: { name: "browser-tests" } });
await thread.call("thread/open", { threadId: "agent-run" });
const initial = run(60);
await thread.call("thread/append", { threadId: "agent-run", events: initial });
await thread.call("thread/open", { threadId: "other-run" });
await thread.call("thread/append", { threadId: "other-run", events: run(1) });

const served = await viewer();
const origin = new URL(served.url).origin;
assert.match(served.url, /^http:\/\/127\.0\.0\.1:\d+\/\?token=[0-9a-f]{32}$/);

const { browser, close: closeBrowser } = await launchBrowser();

const { check, failures } = checks();

/** A page that records console errors, page errors and any request leaving the server. */
async function newPage() {
  const page = await browser.newPage();
  const problems = [];
  page.on("console", (message) => {
    if (message.type() === "error") problems.push("console error: " + message.text());
  });
  page.on("pageerror", (error) => problems.push("page error: " + error.message));
  page.on("request", (request) => {
    if (new URL(request.url()).origin !== origin) problems.push("request: " + request.url());
  });
  await page.route("**/*", (route) =>
    new URL(route.request().url()).origin === origin ? route.continue() : route.abort()
  );
  return { page, problems };
}

const hostile = "<img src=x onerror=window.__pwned=1>";

await check("without the token nothing of the store is shown", async () => {
  const { page } = await newPage();
  for (const url of [origin + "/", origin + "/thread/agent-run", served.url + "x"]) {
    const response = await page.goto(url);
    assert.ok([401, 403].includes(response.status()), url + " answered " + response.status());
    const text = await page.locator("body").textContent();
    assert.ok(!text.includes("agent-run") && !text.includes("step 0"), text);
    assert.equal(response.headers()["access-control-allow-origin"], undefined);
  }
  await page.close();
});

await check("the list shows both threads, newest first, and follows the store", async () => {
  const { page, problems } = await newPage();
  await page.goto(served.url);
  const rows = page.locator("#rows tr");
  await rows.first().waitFor();
  assert.deepEqual(await rows.evaluateAll((r) => r.map((e) => e.dataset.id)), ["other-run", "agent-run"]);
  assert.match(await page.locator('tr[data-id="agent-run"] td.count').textContent(), /^179$/);
  assert.match(await page.locator('tr[data-id="agent-run"] td.last').textContent(), /^tool_call search: /);
  await thread.call("thread/append", {
    threadId: "agent-run",
    events: [{ type: "message", role: "assistant", content: "listed " + hostile, iteration: 59 }],
  });
  await page.locator('tr[data-id="agent-run"] td.count', { hasText: "180" }).waitFor({ timeout: 2000 });
  assert.deepEqual(await rows.evaluateAll((r) => r.map((e) => e.dataset.id)), ["agent-run", "other-run"]);
  assert.equal(await page.locator('tr[data-id="agent-run"] td.last').textContent(), "message assistant: listed " + hostile);
  await page.keyboard.press("/");
  await page.keyboard.type("other");
  assert.equal(await rows.count(), 1);
  await page.keyboard.press("Escape");
  if (readmeShot) await page.screenshot({ path: join(shotsDir, "live-list.png") });
  assert.equal(await page.evaluate(() => window.__pwned), undefined);
  assert.deepEqual(problems, []);
  await page.close();
});

await check("a thread's page takes appends live: no reload, scroll and search kept, hostile text inert", async () => {
  const { page, problems } = await newPage();
  await page.goto(served.url);
  await page.locator('a', { hasText: "agent-run" }).click();
  await page.locator("#timeline > .group").first().waitFor();
  await page.locator(".live-badge", { hasText: "live" }).waitFor();
  await page.evaluate(() => (window.__sameDocument = true));
  assert.equal(await page.locator("#timeline").getAttribute("data-events"), "180");

  // Reading somewhere in the middle: an append lands below, the view does not move.
  await page.evaluate(() => window.scrollTo(0, 1500));
  await page.waitForFunction(() => scrollY === 1500);
  const started = Date.now();
  await thread.call("thread/append", {
    threadId: "agent-run",
    events: [
      { type: "tool_result", toolCallId: "c59", result: "late hits " + hostile, iteration: 59 },
      { type: "message", role: "assistant", content: "</script><script>window.__pwned=1</script> next", iteration: 60 },
    ],
  });
  await page.waitForFunction(() => document.getElementById("timeline").dataset.events === "182", null, { timeout: 2000 });
  console.log("     (append shown after " + (Date.now() - started) + " ms)");
  assert.equal(await page.evaluate(() => scrollY), 1500, "the reader's position stays");
  assert.equal(await page.evaluate(() => window.__sameDocument), true, "no reload");

  // At the bottom, the page follows the newest events; the last call now shows its answer.
  await page.evaluate(() => window.scrollTo(0, document.scrollingElement.scrollHeight));
  const call = page.locator('article.tool-call[data-index="178"]');
  await call.locator(".answer .badge", { hasText: "result #180" }).waitFor();
  await page.getByText("late hits " + hostile, { exact: true }).waitFor();
  await page.getByText("</script><script>window.__pwned=1</script> next", { exact: true }).waitFor();
  await page.evaluate(() => window.scrollTo(0, document.scrollingElement.scrollHeight));
  await page.waitForFunction(() => innerHeight + scrollY >= document.scrollingElement.scrollHeight - 2);
  await thread.call("thread/append", {
    threadId: "agent-run",
    events: [{ type: "message", role: "assistant", content: "follow me", iteration: 61 }],
  });
  await page.getByText("follow me", { exact: true }).waitFor({ timeout: 2000 });
  await page.waitForFunction(() => innerHeight + scrollY >= document.scrollingElement.scrollHeight - 2);
  if (readmeShot) await page.screenshot({ path: readmeShot });

  // A search stays applied: only matching new events join.
  await page.keyboard.press("/");
  await page.keyboard.type("needle");
  await page.waitForFunction(() => document.getElementById("timeline").dataset.events === "0");
  await thread.call("thread/append", {
    threadId: "agent-run",
    events: [
      { type: "message", role: "user", content: "haystack", iteration: 62 },
      { type: "message", role: "assistant", content: "a needle here", iteration: 62 },
    ],
  });
  await page.waitForFunction(() => document.getElementById("timeline").dataset.events === "1", null, { timeout: 2000 });
  assert.equal(await page.locator("#search").inputValue(), "needle");
  assert.equal(await page.locator("#timeline article.event").count(), 1);
  assert.match(await page.locator("#stats").textContent(), /^1 of 185 events match/);

  // The model input is the thread as it is now.
  await page.keyboard.press("Escape");
  await page.getByRole("tab", { name: "Model input: XML" }).click();
  await page.locator("#model-text", { hasText: "a needle here" }).waitFor();

  assert.equal(await page.evaluate(() => window.__pwned), undefined);
  assert.equal(await page.locator("main img, main script, main iframe").count(), 0);
  assert.equal(await page.evaluate(() => document.scripts.length), 2, "only the page's own two scripts");
  await page.screenshot({ path: join(shotsDir, "live-thread.png") });
  assert.deepEqual(problems, []);
  await page.close();
});

await check("images show as the server's thumbnails that open in full; the list's search opens a thread at its hit", async () => {
  const fixture = JSON.parse(readFileSync(join(import.meta.dirname, "fixtures/media.json"), "utf8"));
  const png = fixture[0].content[1].data.replace(/^data:image\/png;base64,/, "");
  const { blob } = await thread.call("blob/put", { data: png, mediaType: "image/png" });
  const filler = (i) => ({ type: "message", role: "user", content: "filler step " + i, iteration: i });
  const events = [];
  for (let i = 0; i < 40; i++) events.push(filler(i));
  events.push({
    type: "message",
    role: "user",
    iteration: 40,
    content: [
      { type: "text", text: "the kestrel dashboard" },
      { type: "image", blob, mediaType: "image/png" },
    ],
  });
  for (let i = 41; i < 80; i++) events.push(filler(i));
  await thread.call("thread/open", { threadId: "media-run" });
  await thread.call("thread/append", { threadId: "media-run", events });

  const { page, problems } = await newPage();
  await page.goto(served.url);
  await page.locator('tr[data-id="media-run"]').waitFor();
  const search = page.locator("#search");
  const hits = page.locator("#hit-list .hit");
  // A malformed query shows the server's reason.
  await page.keyboard.press("s");
  await page.keyboard.type('"unclosed');
  await page.locator("#hits-stats", { hasText: "query: a quote opened at character 1 is never closed" }).waitFor();
  assert.equal(await hits.count(), 0);
  // Snippets are text with <mark>s: a hostile event's markup stays text.
  await search.fill("onerror");
  await hits.first().waitFor();
  assert.ok((await page.locator("#hit-list").textContent()).includes("<img"));
  assert.equal(await page.locator("#hits img, #hits script, #hits b").count(), 0);
  assert.equal(await page.evaluate(() => window.__pwned), undefined);
  await search.fill("kestrel");
  await page.locator("#hit-list .hit mark", { hasText: "kestrel" }).waitFor();
  assert.equal(await hits.count(), 1);
  assert.match(await hits.first().textContent(), /^media-run #40 · message user · iteration 40/);
  if (readmeShot) await page.screenshot({ path: join(shotsDir, "live-search.png") });

  // The hit opens the thread scrolled to its event, whose image is the server's thumbnail.
  await hits.first().locator("a").click();
  await page.waitForURL(/\/thread\/media-run\?token=[0-9a-f]{32}#event-40$/);
  const target = page.locator('article.target[data-index="40"]');
  await target.waitFor();
  await page.waitForFunction(() => {
    const box = document.querySelector("article.target").getBoundingClientRect();
    return scrollY > 0 && box.top >= 0 && box.bottom <= innerHeight;
  });
  await page.waitForFunction(() => {
    const img = document.querySelector("article.target img.thumb");
    return img !== null && img.complete && img.naturalWidth > 0;
  });
  const size = await target.locator("img.thumb").evaluate((img) => [img.naturalWidth, img.naturalHeight]);
  assert.deepEqual(size, [160, 100]);
  assert.match(await target.locator("img.thumb").getAttribute("src"), /^\/blob\/sha256%3A[0-9a-f]{64}\/thumbnail\?token=/);
  await page.screenshot({ path: join(shotsDir, "live-media.png") });

  // A click opens the full image, served as the store typed it.
  const link = target.locator("a.thumb-link");
  const full = await page.request.get(origin + (await link.getAttribute("href")));
  assert.equal(full.status(), 200);
  assert.equal(full.headers()["content-type"], "image/png");
  assert.equal(full.headers()["x-content-type-options"], "nosniff");
  assert.equal((await full.body()).length, 624);
  const [opened] = await Promise.all([page.context().waitForEvent("page"), link.click()]);
  await opened.waitForLoadState();
  await opened.waitForFunction(() => document.images.length === 1 && document.images[0].naturalWidth === 240);
  await opened.close();
  // The malformed query's answer is a 400, which Chromium logs; nothing else may be amiss.
  const refused = "console error: Failed to load resource: the server responded with a status of 400 (Bad Request)";
  assert.deepEqual(problems, [refused]);
  await page.close();
});

await closeBrowser();
thread.close();

await check("SIGTERM stops the viewer with status 0", async () => {
  served.child.kill("SIGTERM");
  assert.deepEqual(await served.exited, { code: 0, signal: null });
});
rmSync(work, { recursive: true, force: true });
if (failures() > 0) {
  console.log(`${failures()} live viewer check(s) failed`);
  process.exit(1);
}
console.log("all live viewer checks passed; screenshots in " + shotsDir);
