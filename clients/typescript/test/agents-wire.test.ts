/**
 * The Agents SDK items ↔ Responses wire items conversion a ThreadSession stores with, against
 * the SDK's own: `toWireItem` gives the `input` the SDK's OpenAIResponsesModel sends for the same
 * items (read off a client that answers offline), a wire item read with `fromWireItem` is sent
 * back by the SDK as that same wire item, and every item comes back exactly with its difference.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { setTracingDisabled, withTrace, type AgentInputItem } from "@openai/agents-core";
import { OpenAIResponsesModel } from "@openai/agents-openai";
import { fromWireItem, isItemDifference, isSdkForm, itemDifference, toWireItem, withDifference } from "../src/agents-wire.js";

setTracingDisabled(true);

type Item = Record<string, unknown>;

/** The SDK's conversions: the request `input` it builds for `items`, and how it reads `output`. */
async function sdkConversions(items: unknown[], output: unknown[] = []): Promise<{ input: Item[]; output: Item[] }> {
  let input: unknown;
  const client = {
    baseURL: "http://localhost/v1",
    responses: {
      create: async (body: { input: unknown }) => {
        input = body.input;
        return { id: "resp_1", object: "response", status: "completed", output, usage: { input_tokens: 0, output_tokens: 0, total_tokens: 0 } };
      },
    },
  };
  const model = new OpenAIResponsesModel(client as never, "gpt-test");
  const response = await withTrace("conversion", () =>
    model.getResponse({
    input: items as AgentInputItem[],
    modelSettings: {},
    tools: [],
    outputType: "text",
    handoffs: [],
      tracing: false,
    } as never),
  );
  return { input: json(input) as Item[], output: json(response.output) as Item[] };
}

function json(value: unknown): unknown {
  return JSON.parse(JSON.stringify(value));
}

/** Items of every kind the conversion covers, as the SDK and its users make them. */
const SDK_ITEMS: Item[] = [
  { type: "message", role: "system", content: "Be brief." },
  { role: "user", content: "Hi" },
  { type: "message", role: "user", content: "Weather in Lyon?", id: "msg_u1" },
  {
    type: "message",
    role: "user",
    content: [
      { type: "input_text", text: "Look: " },
      { type: "input_image", image: "https://example.com/a.png" },
      { type: "input_image", image: { id: "file_1" }, detail: "high" },
      { type: "input_file", file: { id: "file_2" }, filename: "a.pdf" },
      { type: "input_file", file: "https://example.com/b.pdf" },
    ],
  },
  { type: "reasoning", id: "rs_1", content: [{ type: "input_text", text: "Two cities." }], providerData: { encryptedContent: "gAAAAB-secret==" } },
  { type: "reasoning", content: [], providerData: { encrypted_content: "gAAAAC==" } },
  { type: "function_call", id: "fc_1", callId: "c1", name: "weather", arguments: '{"city":"Lyon"}', status: "completed" },
  { type: "function_call", id: "FAKE_ID", callId: "c2", name: "weather", arguments: "{}", status: "completed", providerData: { someField: 1 } },
  { type: "function_call_result", callId: "c1", name: "weather", status: "completed", output: { type: "text", text: "sunny" } },
  { type: "function_call_result", callId: "c2", name: "weather", status: "completed", output: "rain" },
  {
    type: "function_call_result",
    callId: "c3",
    name: "chart",
    status: "completed",
    output: [
      { type: "input_text", text: "see" },
      { type: "input_image", image: "https://example.com/c.png", detail: "low" },
      { type: "input_file", file: { id: "file_3" }, filename: "c.csv" },
    ],
  },
  {
    type: "message",
    id: "msg_1",
    role: "assistant",
    status: "completed",
    content: [
      { type: "output_text", text: "Lyon: sunny. " },
      { type: "output_text", text: "Cited.", providerData: { annotations: [{ type: "url_citation", url: "https://example.com", start_index: 0, end_index: 1, title: "x" }] } },
      { type: "refusal", refusal: "Not that." },
    ],
  },
  { type: "message", role: "assistant", status: "completed", content: [{ type: "output_text", text: "Done." }], providerData: { phase: "final_answer" } },
  { type: "hosted_tool_call", id: "ws_1", name: "web_search_call", status: "completed", providerData: { type: "web_search_call", action: { type: "search", query: "lyon" } } },
  { type: "hosted_tool_call", id: "fs_1", name: "file_search_call", status: "completed", providerData: { type: "file_search_call", queries: ["q"], results: [] } },
  { type: "compaction", id: "cmp_1", encrypted_content: "gAAAAD==" },
  { type: "computer_call", id: "cu_1", callId: "c9", status: "completed", action: { type: "screenshot" }, providerData: { pendingSafetyChecks: [{ id: "sc_1", code: "x" }] } },
  { type: "computer_call_result", callId: "c9", output: { type: "computer_screenshot", data: "data:image/png;base64,AAAA" } },
  { type: "shell_call", id: "sh_1", callId: "c10", status: "completed", action: { commands: ["ls"], timeoutMs: 1000 } },
  { type: "shell_call_output", callId: "c10", output: [{ stdout: "a", stderr: "", outcome: { type: "exit", exitCode: 0 } }, { stdout: "", stderr: "", outcome: { type: "timeout" } }], maxOutputLength: 100 },
  { type: "apply_patch_call", callId: "c11", status: "completed", operation: { type: "update_file", path: "a.txt", diff: "@@", moveTo: "b.txt" } },
  { type: "apply_patch_call_output", callId: "c11", status: "completed", output: "done" },
];

/** Wire items as the Python SDK holds them: its inputs and the model's outputs, dumped. */
const WIRE_ITEMS: Item[] = [
  { role: "system", content: "Be brief." },
  { content: "Hi", role: "user" },
  { role: "user", content: [{ type: "input_text", text: "And " }, { type: "input_image", image_url: "https://example.com/a.png", detail: "auto" }] },
  { id: "rs_1", summary: [{ text: "Two cities.", type: "summary_text" }], type: "reasoning", encrypted_content: "gAAAAB==" },
  { id: "rs_2", summary: [], type: "reasoning", content: [{ text: "raw", type: "reasoning_text" }], status: "completed" },
  { arguments: '{"city": "Lyon"}', call_id: "c1", name: "weather", type: "function_call", id: "fc_1", status: "completed" },
  { call_id: "c1", output: "sunny", type: "function_call_output" },
  { id: "msg_1", content: [{ annotations: [], text: "Lyon: sunny.", type: "output_text", logprobs: [] }], role: "assistant", status: "completed", type: "message" },
  { id: "ws_1", status: "completed", type: "web_search_call", action: { type: "search", query: "lyon" } },
  { id: "cu_1", call_id: "c9", type: "computer_call", action: { type: "click", x: 1, y: 2, button: "left" }, pending_safety_checks: [{ id: "sc_1", code: "malicious_instructions", message: "?" }], status: "completed" },
  { type: "computer_call_output", call_id: "c9", output: { type: "computer_screenshot", image_url: "data:image/png;base64,AAAA" } },
  { type: "shell_call", id: "sh_1", call_id: "c10", status: "completed", action: { commands: ["ls"], timeout_ms: 1000, max_output_length: null } },
  { type: "shell_call_output", id: "sho_1", call_id: "c10", status: "completed", output: [{ stdout: "a", stderr: "", outcome: { type: "exit", exit_code: 0 } }] },
  { type: "apply_patch_call", id: "ap_1", call_id: "c11", status: "completed", operation: { type: "create_file", path: "a.txt", diff: "+x" } },
  { type: "apply_patch_call_output", id: "apo_1", call_id: "c11", status: "completed", output: "ok" },
];

describe("Agents SDK items and the Responses wire form", () => {
  test("toWireItem gives the input the SDK's OpenAIResponsesModel sends", async () => {
    const { input } = await sdkConversions(SDK_ITEMS);
    assert.equal(input.length, SDK_ITEMS.length);
    SDK_ITEMS.forEach((item, i) => assert.deepEqual(json(toWireItem(item)), input[i], JSON.stringify(item)));
  });

  test("a wire item read with fromWireItem is what the SDK sends again", async () => {
    const read = WIRE_ITEMS.map((item) => fromWireItem(item));
    const { input } = await sdkConversions(read);
    WIRE_ITEMS.forEach((wire, i) => {
      // The SDK adds what the API defaults (a function output's status).
      const expected = wire.type === "function_call_output" ? { ...wire, status: "completed" } : wire;
      assert.deepEqual(input[i], expected, JSON.stringify(read[i]));
      assert.deepEqual(json(toWireItem(read[i])), expected);
    });
  });

  test("the model's output items, as the SDK reads them, are read back from their wire items with no difference", async () => {
    const outputs = WIRE_ITEMS.filter((item) => "id" in item);
    const { output } = await sdkConversions([], outputs);
    assert.equal(output.length, outputs.length);
    output.forEach((item, i) => {
      assert.deepEqual(fromWireItem(outputs[i]), item);
      assert.deepEqual(itemDifference(item, fromWireItem(json(toWireItem(item)) as Item)), {});
    });
  });

  test("every item comes back exactly with its difference, and the difference is only what the wire form lacks", () => {
    for (const item of SDK_ITEMS) {
      const wire = json(toWireItem(item)) as Item;
      assert.equal(isSdkForm(wire), false, JSON.stringify(wire));
      const back = fromWireItem(wire);
      const difference = itemDifference(item, back);
      assert.deepEqual(json(difference), difference);
      assert.deepEqual(withDifference(back, difference), item, JSON.stringify(item));
    }
    const difference = (item: Item) => itemDifference(item, fromWireItem(json(toWireItem(item))));
    // What the SDK's runner makes of a tool's text: the name only.
    assert.deepEqual(difference(SDK_ITEMS[8]!), { set: { name: "weather" } });
    assert.deepEqual(difference(SDK_ITEMS[9]!), { set: { name: "weather", output: "rain" } });
    assert.deepEqual(difference(SDK_ITEMS[0]!), {});
    assert.deepEqual(difference(SDK_ITEMS[2]!), {});
    assert.deepEqual(difference(SDK_ITEMS[1]!), { unset: ["type"] });
    // A call written without the `providerData` the SDK's model gives it.
    assert.deepEqual(difference(SDK_ITEMS[6]!), { unset: ["providerData"] });
  });

  test("items kept in the SDK's own form are told from wire items", () => {
    for (const item of WIRE_ITEMS) assert.equal(isSdkForm(item), false, JSON.stringify(item));
    const sdkOnly: Item[] = [
      { type: "function_call", callId: "c1", name: "t", arguments: "{}" },
      { type: "function_call_result", callId: "c1", name: "t", status: "completed", output: { type: "text", text: "r" } },
      { type: "reasoning", content: [{ type: "input_text", text: "x" }] },
      { type: "message", role: "assistant", status: "completed", content: [{ type: "output_text", text: "a" }] },
      { type: "hosted_tool_call", name: "web_search_call", status: "completed", providerData: { query: "lyon" } },
      { type: "tool_search_call", id: "ts_1", status: "completed", arguments: {}, providerData: {} },
      { type: "message", role: "user", content: [{ type: "input_image", image: "https://example.com/a.png" }] },
      { type: "message", role: "user", content: [{ type: "input_file", file: { id: "file_1" } }] },
      { type: "message", role: "assistant", content: [{ type: "output_text", text: "a", annotations: [], providerData: { logprobs: [] } }] },
    ];
    for (const item of sdkOnly) assert.equal(isSdkForm(item), true, JSON.stringify(item));
    // Kinds without a conversion stay in the SDK's form, so they read back as they are.
    assert.equal(toWireItem(sdkOnly[5]!), sdkOnly[5]);
    assert.equal(isSdkForm({ type: "computer_call", callId: "c9", status: "completed", action: { type: "screenshot" } }), true);
  });

  test("a computer call's empty safety checks are left out, as the SDK leaves them out (the API refuses them)", async () => {
    const wire = { id: "cu_2", call_id: "c12", type: "computer_call", action: { type: "screenshot" }, pending_safety_checks: [], status: "completed" };
    const { input } = await sdkConversions([fromWireItem(wire)]);
    const { pending_safety_checks: _empty, ...sent } = wire;
    assert.deepEqual(input, [sent]);
    assert.deepEqual(json(toWireItem(fromWireItem(wire))), sent);
    // A user message of text is the same in both forms.
    assert.equal(isSdkForm({ type: "message", role: "user", content: [{ type: "input_text", text: "q" }] }), false);
  });

  test("only an object of `set` and a list of `unset` names is read as a difference", () => {
    for (const ok of [{}, { set: { name: "t" } }, { unset: ["type"] }, { set: {}, unset: [] }]) assert.equal(isItemDifference(ok), true, JSON.stringify(ok));
    for (const bad of [null, "x", [], { set: "x" }, { set: [] }, { unset: "type" }, { unset: [1] }]) assert.equal(isItemDifference(bad), false, JSON.stringify(bad));
  });

  test("items not shaped as the SDK types them convert without failing", () => {
    assert.deepEqual(toWireItem({ role: "assistant", content: "plain" }), { type: "message", role: "assistant", content: "plain" });
    assert.deepEqual(fromWireItem({ type: "message", role: "assistant", content: "plain" }), { type: "message", role: "assistant", content: [{ type: "output_text", text: "plain" }], providerData: {} });
    assert.deepEqual(fromWireItem({ type: "reasoning", id: "rs_1" }), { type: "reasoning", id: "rs_1", content: [], providerData: { type: "reasoning", id: "rs_1" } });
    assert.deepEqual(fromWireItem({ role: "developer", content: "x" }), { type: "unknown", providerData: { role: "developer", content: "x" } });
  });
});
