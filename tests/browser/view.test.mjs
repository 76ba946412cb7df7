// Opens `threadkeeper view` pages in headless Chromium and checks what a person sees.
//
//   node view.test.mjs BINARY OUT_DIR [--readme-screenshot PATH]
//
// Builds the pages with BINARY into OUT_DIR/pages, saves a screenshot of each under
// OUT_DIR/screenshots, runs every check and exits non-zero when any failed.
import { CHECK_TIMEOUT_MS, checks, launchBrowser } from "./harness.mjs";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";

const [binary, outDir, flag, readmeShot] = process.argv.slice(2);
if (!binary || !outDir) {
  console.error("usage: node view.test.mjs BINARY OUT_DIR [--readme-screenshot PATH]");
  process.exit(64);
}
const root = resolve(import.meta.dirname, "../..");
const pagesDir = join(outDir, "pages");
const shotsDir = join(outDir, "screenshots");
mkdirSync(pagesDir, { recursive: true });
mkdirSync(shotsDir, { recursive: true });

function buildPage(name, input) {
  const out = join(pagesDir, name + ".html");
  execFileSync(binary, ["view", input, "--out", out], { stdio: ["ignore", "ignore", "inherit"], timeout: CHECK_TIMEOUT_MS });
  return out;
}

/** A generated run: per iteration a user note, a tool call, its result and an answer. */
function writeBigThread(path, events) {
  const lines = [];
  for (let i = 0; lines.length < events; i++) {
    const iteration = Math.floor(lines.length / 4);
    const id = "call-" + iteration;
    lines.push({ type: "message", role: "user", content: "step " + iteration, iteration });
    lines.push({ type: "tool_call", toolName: "search", toolCallId: id, args: { query: "q" + iteration }, iteration });
    lines.push({ type: "tool_result", toolCallId: id, result: { hits: [iteration, iteration + 1] }, iteration });
    lines.push({ type: "message", role: "assistant", content: "found " + iteration, iteration });
  }
  writeFileSync(path, lines.slice(0, events).map((e) => JSON.stringify(e)).join("\n") + "\n");
}

const { browser, close: closeBrowser } = await launchBrowser();

const { check, failures } = checks();

/** Opens a page, recording console errors, page errors and every request beyond the file. */
async function open(file, { colorScheme = "light" } = {}) {
  const page = await browser.newPage();
  await page.emulateMedia({ colorScheme });
  const url = pathToFileURL(file).href;
  const problems = [];
  page.on("console", (message) => {
    if (message.type() === "error") problems.push("console error: " + message.text());
  });
  page.on("pageerror", (error) => problems.push("page error: " + error.message));
  page.on("request", (request) => {
    if (request.url() !== url) problems.push("request: " + request.url());
  });
  await page.route("**/*", (route) => (route.request().url() === url ? route.continue() : route.abort()));
  await page.goto(url, { waitUntil: "load" });
  await page.locator("#timeline > .group").first().waitFor();
  return { page, problems };
}

async function finish({ page, problems }, shot) {
  if (shot) await page.screenshot({ path: join(shotsDir, shot + ".png"), fullPage: false });
  assert.deepEqual(problems, [], "no console errors and no network requests");
  await page.close();
}

const shownGroups = (page) => page.locator("#timeline > .group").count();

await check("example run: iterations, calls beside results, search, model input, keys", async () => {
  const opened = await open(buildPage("thread", join(root, "examples/thread.json")));
  const { page } = opened;
  // Three iterations; the summary in iteration 2 replaces iteration 1, which is folded under it.
  const stats = await page.locator("#stats").textContent();
  assert.match(stats, /^3 iterations · 13 events · 2 groups shown/);
  assert.equal(await shownGroups(page), 2);
  assert.deepEqual(await page.locator("#timeline > .group").evaluateAll((g) => g.map((e) => e.dataset.iteration)), ["0", "2"]);
  assert.equal(await page.locator("article.tool-call").count(), 0, "the replaced iteration starts folded");
  await page.locator("details.folded > summary").focus();
  await page.keyboard.press("Enter");
  await page.locator("details.folded .group").first().waitFor();
  assert.equal(await page.locator("details.folded .group").count(), 1);

  // A tool call and its result side by side: same row, result to the right.
  const call = page.locator("article.tool-call").first();
  await call.scrollIntoViewIfNeeded();
  const callPane = await call.locator(".call").boundingBox();
  const answerPane = await call.locator(".answer").boundingBox();
  assert.ok(answerPane.x >= callPane.x + callPane.width, "the result is right of its call");
  assert.ok(Math.abs(answerPane.y - callPane.y) < 4, "the result is on the call's row");
  assert.match(await call.locator(".answer .badge").textContent(), /^result #/);

  // Search narrows the list, and Escape brings everything back.
  const before = Number(await page.locator("#timeline").getAttribute("data-events"));
  await page.keyboard.press("/");
  assert.equal(await page.evaluate(() => document.activeElement.id), "search");
  await page.keyboard.type("calculator");
  await page.waitForFunction((all) => Number(document.getElementById("timeline").dataset.events) < all, before);
  const after = Number(await page.locator("#timeline").getAttribute("data-events"));
  assert.ok(after > 0 && after < before, `search narrows ${before} events to ${after}`);
  await page.screenshot({ path: join(shotsDir, "thread-search.png") });
  await page.keyboard.press("Escape");
  await page.waitForFunction((all) => Number(document.getElementById("timeline").dataset.events) === all, before);

  // j moves between iteration groups.
  await page.keyboard.press("j");
  assert.equal(await page.evaluate(() => document.activeElement.classList.contains("group")), true);

  // The model input toggle shows the exact XML.
  await page.getByRole("tab", { name: "Model input: XML" }).click();
  const xml = execFileSync(binary, ["render", join(root, "examples/thread.json")], { encoding: "utf8", timeout: CHECK_TIMEOUT_MS });
  assert.equal(await page.locator("#model-text").textContent(), xml);
  await page.screenshot({ path: join(shotsDir, "thread-model-xml.png") });
  await page.getByRole("tab", { name: "Model input: messages" }).click();
  assert.match(await page.locator("#model-text").textContent(), /"type": "human"/);
  await page.getByRole("tab", { name: "Timeline" }).click();
  if (readmeShot) {
    await page.locator("details.folded > summary").click();
    await page.locator("details.folded .group article.tool-call").first().waitFor();
    await page.screenshot({ path: readmeShot, fullPage: true });
  }
  await finish(opened, "thread");
});

await check("example run in dark mode", async () => {
  const opened = await open(join(pagesDir, "thread.html"), { colorScheme: "dark" });
  const background = await opened.page.evaluate(() => getComputedStyle(document.body).backgroundColor);
  assert.notEqual(background, "rgb(251, 251, 250)", "dark mode has its own background");
  await finish(opened, "thread-dark");
});

await check("provider thread: unknown event types, unanswered calls", async () => {
  const opened = await open(buildPage("provider-thread", join(root, "examples/provider-thread.json")));
  await opened.page.locator(".answer.unanswered").first().waitFor();
  await finish(opened, "provider-thread");
});

await check("turn document", async () => {
  const opened = await open(buildPage("turn", join(root, "examples/turn.yaml")));
  assert.ok((await shownGroups(opened.page)) > 0);
  await finish(opened, "turn");
});

await check("hostile strings are shown as text and never run", async () => {
  const opened = await open(buildPage("hostile", join(import.meta.dirname, "fixtures/hostile.json")));
  const { page } = opened;
  await page.locator("article.event").first().waitFor();
  await page.mouse.move(400, 400);
  assert.equal(await page.evaluate(() => window.__pwned), undefined);
  assert.equal(await page.locator("main img, main svg, main iframe, main b, main script").count(), 0);
  await page.getByText("<img src=x onerror=window.__pwned=1>", { exact: true }).waitFor();
  await page.getByText('"</script><script>window.__pwned=1</script>"', { exact: false }).first().waitFor();
  await page.getByText("<!-- <script>window.__pwned=1</script>", { exact: true }).waitFor();
  assert.match(await page.locator("article.error.fatal .badge").textContent(), /non-recoverable/);
  assert.equal(await page.evaluate(() => document.scripts.length), 2, "only the page's own two scripts");
  await finish(opened, "hostile");
});

await check("media parts are named (kind, type, size, blob id), never shown", async () => {
  const opened = await open(buildPage("media", join(import.meta.dirname, "fixtures/media.json")));
  const { page } = opened;
  await page.locator("article.event").first().waitFor();
  const labels = await page.locator(".media").allTextContents();
  assert.ok(
    labels.includes("image · image/png · 3×2 · 73 bytes · sha256:9f1a73312b9ede0b7f0e20ffd13691995f382422721eff6d4f1216a239f9e9cc"),
    labels.join("\n"),
  );
  assert.ok(labels.includes("image · type unknown · https://example.com/mockup.png"), labels.join("\n"));
  assert.ok(labels.some((l) => l.startsWith("file · application/pdf · spec.pdf · 327 bytes · sha256:4028")), labels.join("\n"));
  assert.equal(await page.locator("main img").count(), 0, "no image is shown");
  await finish(opened, "media");
});

await check("long bodies collapse with their size, JSON text is pretty-printed, strays are marked", async () => {
  const source = join(pagesDir, "bodies.json");
  const rows = Array.from({ length: 300 }, (_, i) => ({ id: i, name: "row " + i }));
  writeFileSync(
    source,
    JSON.stringify([
      { type: "tool_call", toolName: "query", toolCallId: "q1", args: { sql: "select 1" }, iteration: 1 },
      { type: "tool_result", toolCallId: "q1", result: JSON.stringify({ rows }), iteration: 1 },
      { type: "tool_result", toolCallId: "q0", result: "late", iteration: 1 },
    ])
  );
  const opened = await open(buildPage("bodies", source));
  const { page } = opened;
  const toggle = page.locator("article.tool-call details > summary");
  assert.match(await toggle.textContent(), /^Show all \(\d+\.\d KB, \d+ lines\)$/);
  await toggle.click();
  const full = page.locator("article.tool-call details pre.body");
  await full.waitFor();
  assert.match(await full.textContent(), /^\{\n  "rows": \[\n    \{\n      "id": 0,/);
  assert.match(await page.locator("article.tool-result.stray .badge").textContent(), /stray result/);
  await finish(opened, "bodies");
});

await check("a generated 100k-event thread opens", async () => {
  const source = join(pagesDir, "big-100k.jsonl");
  writeBigThread(source, 100000);
  const opened = await open(buildPage("big-100k", source));
  const { page } = opened;
  assert.equal(await shownGroups(page), 25000);
  const first = page.locator("#timeline > .group").first();
  assert.ok(await first.isVisible());
  await first.locator("article.event").first().waitFor();
  // Only groups near the view are filled.
  const filled = await page.locator("#timeline > .group article.event").count();
  assert.ok(filled > 0 && filled < 2000, `${filled} events built of 100000`);
  // Scrolling far fills the groups there.
  await page.evaluate(() => window.scrollBy(0, 200000));
  await page.waitForFunction(() => {
    const group = document.elementFromPoint(innerWidth / 2, innerHeight / 2)?.closest("#timeline > .group");
    return scrollY >= 200000 && group !== null && group.querySelector("article.event") !== null;
  });
  await page.keyboard.press("/");
  await page.keyboard.type("found 24999");
  await page.waitForFunction(() => document.getElementById("timeline").dataset.events === "1");
  await finish(opened, "big-100k");
});

await closeBrowser();
if (failures() > 0) {
  console.log(`${failures()} browser check(s) failed`);
  process.exit(1);
}
console.log("all browser checks passed; screenshots in " + shotsDir);
