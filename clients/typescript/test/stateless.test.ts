import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { ErrorCodes, unknownEvent, type AnyAgentEvent, type StoredMessage, type ThreadKeeper, type Turn } from "../src/index.js";
import { serializeThreadToXml as referenceXml } from "../bench/reference-serializer.js";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { assertSubset, loopEvents, rejectsWithCode, repoRoot, SAMPLE_XML, sampleEvents, spawnMemory } from "./helpers.js";

let tk: ThreadKeeper;
before(async () => {
  tk = await spawnMemory();
});
after(async () => {
  await tk.close();
});

describe("stateless: xml", () => {
  test("escapeXml escapes the five characters and replaces those XML forbids", async () => {
    assert.equal(await tk.escapeXml(`a & b < c > d "e" 'f'`), "a &amp; b &lt; c &gt; d &quot;e&quot; &apos;f&apos;");
    assert.equal(await tk.escapeXml("\u0000\u0008\u000B\u000C\u001B[31m\uFFFE\uFFFF"), "\uFFFD\uFFFD\uFFFD\uFFFD\uFFFD[31m\uFFFD\uFFFD");
    assert.equal(await tk.escapeXml("tab\tnl\ncr\r é 😀"), "tab\tnl\ncr\r é 😀");
    assert.equal(await tk.escapeXml(""), "");
  });

  test("serializeThreadToXml gives the seed document, with prefix and escape options", async () => {
    assert.equal(await tk.serializeThreadToXml(sampleEvents()), SAMPLE_XML);
    assert.equal(await tk.serializeThreadToXml([]), "<thread>\n</thread>");
    assert.equal(await tk.serializeThreadToXml(sampleEvents(), { responsePrefix: "Now:" }), `${SAMPLE_XML}\nNow:`);
    assert.equal(await tk.serializeThreadToXml(sampleEvents(), { responsePrefix: "" }), SAMPLE_XML);
    const minimal = await tk.serializeThreadToXml(sampleEvents(), { escape: "minimal" });
    assert.equal(minimal.split("\n")[2], '  <event type="tool_input" id="1" name="calculator" iteration="1">{"expression":"2+2"}</event>');
  });

  test("serializeThreadToXml: every event type, as the seed's table says", async () => {
    const events: AnyAgentEvent[] = [
      { type: "message", role: "system", content: "sys", iteration: 0 },
      { type: "tool_result", toolCallId: "missing", result: { a: [1, 1.5, 1e21] }, iteration: 0 },
      { type: "error", error: "boom", recoverable: false, iteration: 1 },
      { type: "human_input_requested", question: "OK?", iteration: 1 },
      { type: "human_input_received", response: "yes", iteration: 1 },
      { type: "summary", summarizedIterations: [0, 1], summary: "sum", iteration: 2 },
      unknownEvent({ type: "approval", iteration: 2, decision: "ok", timestamp: 9 }),
    ];
    const expected = [
      "<thread>",
      '  <event type="system" id="0" iteration="0">sys</event>',
      '  <event type="tool_output" id="1" name="unknown" status="success" iteration="0">{&quot;a&quot;:[1,1.5,1e+21]}</event>',
      '  <event type="error" id="2" iteration="1" recoverable="false">boom</event>',
      '  <event type="human_input_requested" id="3" iteration="1">OK?</event>',
      '  <event type="human_input_received" id="4" iteration="1">yes</event>',
      '  <event type="summary" id="5" iteration="2" summarizedIterations="0,1">sum</event>',
      '  <event type="approval" id="6" iteration="2">{&quot;decision&quot;:&quot;ok&quot;}</event>',
      "</thread>",
    ].join("\n");
    assert.equal(await tk.serializeThreadToXml(events), expected);
    assert.equal(referenceXml(events), expected, "the in-process reference agrees");
  });

  test("serializeThreadToXml agrees with the in-process reference on an agent loop", async () => {
    const events = loopEvents(400);
    assert.equal(await tk.serializeThreadToXml(events, { responsePrefix: "Next" }), referenceXml(events, { responsePrefix: "Next" }));
  });

  test("invalid params are -32602 naming the field", async () => {
    const error = await rejectsWithCode(tk.serializeThreadToXml([{ type: "tool_result", iteration: 0 } as unknown as AnyAgentEvent]), ErrorCodes.InvalidParams);
    assert.equal((error.data as { path: string }).path, "events[0].toolCallId");
    await rejectsWithCode(tk.call("xml/escape", { text: 5 }), ErrorCodes.InvalidParams);
    await rejectsWithCode(tk.call("xml/escape", {}), ErrorCodes.InvalidParams);
    await rejectsWithCode(tk.call("xml/escape", { text: "x", extra: true }), ErrorCodes.InvalidParams);
  });
});

describe("stateless: conversions (seed 003)", () => {
  const messages: StoredMessage[] = [
    { type: "system", data: { content: "Be brief" } },
    { type: "human", data: { content: "Hi <b>" } },
    { type: "ai", data: { content: "", tool_calls: [{ id: "c1", name: "calc", args: { x: 1 }, type: "tool_call" }] } },
    { type: "tool", data: { content: "2", tool_call_id: "c1" } },
  ];

  test("messagesToText", async () => {
    assert.equal(
      await tk.messagesToText([
        { type: "human", data: { content: "First" } },
        { type: "human", data: { content: "Second" } },
      ]),
      "[User]\nFirst\n\n[User]\nSecond",
    );
    assert.equal(
      await tk.messagesToText([
        { type: "system", data: { content: "S" } },
        { type: "ai", data: { content: "A" } },
        { type: "tool", data: { content: "T", tool_call_id: "c" } },
      ]),
      "[System]\nS\n\n[Assistant]\nA\n\n[Tool Result]\nT",
    );
  });

  test("messagesToXml", async () => {
    assert.equal(
      await tk.messagesToXml(messages),
      [
        "<thread>",
        '  <event type="system" id="0" iteration="0">Be brief</event>',
        '  <event type="human" id="1" iteration="0">Hi &lt;b&gt;</event>',
        '  <event type="tool_input" id="2" name="calc" call_id="c1" iteration="0">{&quot;x&quot;:1}</event>',
        '  <event type="tool_output" id="3" name="calc" call_id="c1" status="success" iteration="0">2</event>',
        "</thread>",
      ].join("\n"),
    );
    // A lone pre-serialized thread comes back byte for byte.
    assert.equal(await tk.messagesToXml([{ type: "human", data: { content: SAMPLE_XML } }]), SAMPLE_XML);
    // Behind a system message its events are spliced in, ids renumbered (not escaped into one event).
    assert.equal(
      await tk.messagesToXml([
        { type: "system", data: { content: "S" } },
        { type: "human", data: { content: `  ${SAMPLE_XML}` } },
      ]),
      [
        "<thread>",
        '  <event type="system" id="0" iteration="0">S</event>',
        ...SAMPLE_XML.split("\n")
          .slice(1, -1)
          .map((line) => line.replace(/ id="(\d+)"/, (_, id: string) => ` id="${Number(id) + 1}"`)),
        "</thread>",
      ].join("\n"),
    );
  });

  test("parseToolCalls", async () => {
    const text = 'Let me compute.\n```json\n{"tool_calls": [{"name": "calc", "args": {"x": 1}}, {"name": "now", "id": "t9"}]}\n```';
    const parsed = await tk.parseToolCalls(text);
    assert.deepEqual(parsed.toolCalls, [
      { id: "call_0", name: "calc", args: { x: 1 } },
      { id: "t9", name: "now", args: {} },
    ]);
    assert.equal(parsed.content, "Let me compute.");
    // The text before and after the fence, each trimmed, joined by a blank line.
    assert.deepEqual(await tk.parseToolCalls('  Before.\n```json\n{"tool_calls": [{"name": "calc"}]}\n```\n  After.  '), {
      toolCalls: [{ id: "call_0", name: "calc", args: {} }],
      content: "Before.\n\nAfter.",
    });
    // No tool_calls array, or an entry without a string name: no calls, the whole text trimmed.
    const noArray = '\n```json\n{"calls": []}\n```\n';
    assert.deepEqual(await tk.parseToolCalls(noArray), { toolCalls: [], content: noArray.trim() });
    const noName = '```json\n{"tool_calls": [{"args": {}}]}\n```';
    assert.deepEqual(await tk.parseToolCalls(noName), { toolCalls: [], content: noName });
    const broken = "```json\n{not json}\n```";
    assert.deepEqual(await tk.parseToolCalls(broken), { toolCalls: [], content: broken });
    assert.deepEqual(await tk.parseToolCalls("plain answer"), { toolCalls: [], content: "plain answer" });
  });

  test("parseThreadXml inverts the serializer as far as XML allows", async () => {
    const events = await tk.parseThreadXml(SAMPLE_XML);
    assert.equal(events.length, 5);
    assertSubset(events[0], { type: "message", role: "user", content: "What is 2+2?", iteration: 0 });
    assertSubset(events[1], { type: "tool_call", toolName: "calculator", args: { expression: "2+2" }, iteration: 1 });
    assertSubset(events[2], { type: "tool_result", result: "4", iteration: 1 });
    assertSubset(events[3], { type: "message", role: "assistant", content: "The answer is 4.", iteration: 1 });
    assertSubset(events[4], { type: "completion", result: "The answer is 4.", iteration: 1 });
    // The XML has no call ids: the result is paired with its call by whatever id the parser picks.
    assert.equal((events[2] as { toolCallId?: unknown }).toolCallId, (events[1] as { toolCallId?: unknown }).toolCallId);
    assert.ok(events.every((e) => !("timestamp" in e)), "timestamps are not in the XML");
    assert.equal(await tk.serializeThreadToXml(events), SAMPLE_XML, "serialize(parse(x)) == x");
    await rejectsWithCode(tk.parseThreadXml("<thread><event"), ErrorCodes.InvalidParams);
  });
});

describe("thread renderers: messages and text (seeds 001, 002)", () => {
  test("standard mode follows the upstream table", async () => {
    const thread = await tk.openThread();
    await thread.append(sampleEvents());
    const rendered = await thread.render("messages");
    assert.equal(rendered.contextMode, "standard");
    assert.equal(rendered.version, 1);
    assert.deepEqual(rendered.messages, [
      { type: "human", data: { content: "What is 2+2?" } },
      { type: "ai", data: { content: "", tool_calls: [{ id: "c1", name: "calculator", args: { expression: "2+2" }, type: "tool_call" }] } },
      { type: "tool", data: { content: "4", tool_call_id: "c1" } },
      { type: "ai", data: { content: "The answer is 4." } },
    ]);
  });

  test("system message from instructions and summaries; prefixes of system/human-input/error events", async () => {
    const thread = await tk.openThread({ settings: { instructions: "Be brief." } });
    await thread.append([
      { type: "summary", summarizedIterations: [0, 1], summary: "Did things.", iteration: 2 },
      { type: "message", role: "system", content: "note", iteration: 2 },
      { type: "human_input_received", response: "yes", iteration: 2 },
      { type: "error", error: "bad", recoverable: true, iteration: 2 },
      { type: "error", error: "worse", recoverable: false, iteration: 2 },
    ]);
    assert.deepEqual(await thread.renderMessages(), [
      { type: "system", data: { content: "## Previous Iteration Summaries\n\n### Iteration(s) 0, 1\nDid things.\n\n\n\nBe brief." } },
      { type: "human", data: { content: "[System]: note" } },
      { type: "human", data: { content: "[Human Response]: yes" } },
      { type: "human", data: { content: "[Error (recoverable)]: bad" } },
      { type: "human", data: { content: "[Error]: worse" } },
    ]);
  });

  test("xml mode: [system?, human(<thread> document + prefix)]", async () => {
    const thread = await tk.openThread({ settings: { contextMode: "xml", instructions: "Be brief.", responsePrefix: "Go:" } });
    await thread.append(sampleEvents());
    const rendered = await thread.render("messages");
    assert.equal(rendered.contextMode, "xml");
    assert.deepEqual(rendered.messages, [
      { type: "system", data: { content: "Be brief." } },
      { type: "human", data: { content: `${SAMPLE_XML}\nGo:` } },
    ]);
    // The option overrides the setting; completion events give no message.
    assert.deepEqual(await thread.renderMessages({ contextMode: "standard" }), [
      { type: "system", data: { content: "Be brief." } },
      { type: "human", data: { content: "What is 2+2?" } },
      { type: "ai", data: { content: "", tool_calls: [{ id: "c1", name: "calculator", args: { expression: "2+2" }, type: "tool_call" }] } },
      { type: "tool", data: { content: "4", tool_call_id: "c1" } },
      { type: "ai", data: { content: "The answer is 4." } },
    ]);
  });

  test("renderText is messagesToPrompt of the messages", async () => {
    const thread = await tk.openThread();
    await thread.append([
      { type: "message", role: "user", content: "First", iteration: 0 },
      { type: "message", role: "assistant", content: "Second", iteration: 0 },
    ]);
    assert.equal(await thread.renderText(), "[User]\nFirst\n\n[Assistant]\nSecond");
    assert.equal(await thread.renderText(), await tk.messagesToText(await thread.renderMessages()));
  });
});

describe("turns (seed 004)", () => {
  const turn: Turn = {
    id: "turn_tools",
    blocks: [
      { kind: "user", role: "user", payload: { text: "Search golang" } },
      { kind: "tool_call", payload: { id: "fc_1", name: "search", args: { q: "golang" } } },
      { kind: "tool_use", payload: { id: "fc_1", result: { hits: 10 } } },
      { kind: "llm_text", role: "assistant", payload: { text: "Found 10." } },
    ],
  };

  test("toYaml/fromYaml and toJson/fromJson round-trip the blocks", async () => {
    const yaml = await tk.turnToYaml(turn);
    assert.match(yaml, /kind: tool_call/);
    const fromYaml = await tk.turnFromYaml(yaml);
    assert.deepEqual(fromYaml.warnings, []);
    assertSubset(fromYaml.turn.blocks, turn.blocks);
    const json = await tk.turnToJson(turn);
    assertSubset(JSON.parse(json), { id: "turn_tools" });
    assertSubset((await tk.turnFromJson(json)).turn.blocks, turn.blocks);
  });

  test("validate reports problems with paths", async () => {
    assert.deepEqual(await tk.validateTurn(turn), { valid: true, problems: [] });
    const bad: Turn = { blocks: [{ kind: "tool_call", payload: { args: {} } }] };
    // Seed 004: a tool_call needs id and name; missing fields are problems only in strict mode.
    assert.equal((await tk.validateTurn(bad)).valid, true);
    const result = await tk.validateTurn(bad, { strict: true });
    assert.equal(result.valid, false);
    assert.deepEqual(
      result.problems.map((p) => p.path),
      ["blocks[0].payload.id", "blocks[0].payload.name"],
    );
    assert.ok(result.problems.every((p) => typeof p.message === "string" && p.message.length > 0));
  });

  test("export then import gives back the same events, settings and metadata", async () => {
    const thread = await tk.openThread({ settings: { instructions: "Be brief." }, metadata: { user: "ann" } });
    await thread.append(sampleEvents());
    for (const format of ["yaml", "json"] as const) {
      const text = await thread.export(format);
      const imported = await tk.importThread(text, format, { threadId: `${thread.id}-${format}` });
      assert.equal(imported.id, `${thread.id}-${format}`);
      assert.deepEqual(await imported.events(), await thread.events());
      assert.deepEqual([imported.info.settings, imported.info.metadata], [{ instructions: "Be brief." }, { user: "ann" }]);
      assert.equal(await imported.renderXml(), await thread.renderXml());
    }
  });

  test("import without threadId uses the exported thread's id, and does not replace a thread with events", async () => {
    const thread = await tk.openThread();
    await thread.append(sampleEvents());
    const text = await thread.export("json");
    await rejectsWithCode(tk.importThread(text, "json"), ErrorCodes.ThreadExists);
    const events = await thread.events();
    await thread.delete();
    const restored = await tk.importThread(text, "json");
    assert.equal(restored.id, thread.id);
    assert.deepEqual(await restored.events(), events);
  });

  test("agent hosts' session files import as threads, a bad line refused by its number", async () => {
    const dir = join(repoRoot(), "tests", "fixtures", "host-sessions");
    for (const [format, file] of [
      ["claude-code", "claude-code/agent-history-forked-2.0.75.jsonl"],
      ["codex", "codex/agent-history-compaction-0.77.0.jsonl"],
    ] as const) {
      const text = readFileSync(join(dir, file), "utf8");
      const imported = await tk.importThread(text, format, { threadId: `host-${format}`, branches: false });
      assert.equal(imported.id, `host-${format}`);
      assert.ok(imported.info.eventCount > 0);
      const { messages } = await imported.renderOpenAIChat();
      assert.ok(messages.length > 0);
    }
    await rejectsWithCode(tk.importThread("{\"type\":\"user\"}\nnot json\n", "claude-code"), ErrorCodes.InvalidParams);
  });
});
