import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { AIMessage, HumanMessage, SystemMessage, ToolMessage } from "@langchain/core/messages";
import { storedToLangChainMessages, type StoredMessage } from "../src/index.js";
import { sampleEvents, spawnMemory } from "./helpers.js";

const stored: StoredMessage[] = [
  { type: "system", data: { content: "Be brief." } },
  { type: "human", data: { content: "What is 2+2?" } },
  { type: "ai", data: { content: "", tool_calls: [{ id: "c1", name: "calculator", args: { expression: "2+2" }, type: "tool_call" }] } },
  { type: "tool", data: { content: "4", tool_call_id: "c1" } },
  { type: "ai", data: { content: "The answer is 4." } },
];

describe("LangChain", () => {
  test("stored messages become the LangChain message classes with their fields", async () => {
    const messages = await storedToLangChainMessages(stored);
    assert.equal(messages.length, 5);
    assert.ok(messages[0] instanceof SystemMessage);
    assert.equal(messages[0].content, "Be brief.");
    assert.ok(messages[1] instanceof HumanMessage);
    assert.equal(messages[1].content, "What is 2+2?");
    const call = messages[2];
    assert.ok(call instanceof AIMessage);
    assert.equal(call.content, "");
    assert.deepEqual(call.tool_calls, [{ id: "c1", name: "calculator", args: { expression: "2+2" }, type: "tool_call" }]);
    const result = messages[3];
    assert.ok(result instanceof ToolMessage);
    assert.equal(result.tool_call_id, "c1");
    assert.equal(result.content, "4");
    assert.ok(messages[4] instanceof AIMessage);
    assert.equal(messages[4].content, "The answer is 4.");
  });

  test("a missing @langchain/core is a clear error", async () => {
    const missing = Object.assign(new Error("Cannot find package '@langchain/core'"), { code: "ERR_MODULE_NOT_FOUND" });
    await assert.rejects(
      storedToLangChainMessages(stored, () => Promise.reject(missing)),
      (error: Error) => {
        assert.match(error.message, /optional peer dependency @langchain\/core/);
        assert.match(error.message, /npm install @langchain\/core/);
        assert.equal(error.cause, missing);
        return true;
      },
    );
    const other = new Error("syntax error in module");
    await assert.rejects(storedToLangChainMessages(stored, () => Promise.reject(other)), (error) => error === other);
  });

  test("thread.toLangChainMessages renders and converts", async () => {
    const tk = await spawnMemory();
    try {
      const thread = await tk.openThread({ settings: { instructions: "Be brief." } });
      await thread.append(sampleEvents());
      const messages = await thread.toLangChainMessages();
      assert.deepEqual(
        messages.map((m) => m.constructor.name),
        ["SystemMessage", "HumanMessage", "AIMessage", "ToolMessage", "AIMessage"],
      );
      assert.deepEqual((messages[2] as AIMessage).tool_calls?.map((c) => [c.id, c.name, c.args]), [["c1", "calculator", { expression: "2+2" }]]);
      assert.equal((messages[3] as ToolMessage).tool_call_id, "c1");
      const xml = await thread.toLangChainMessages({ contextMode: "xml" });
      assert.deepEqual(xml.map((m) => m.constructor.name), ["SystemMessage", "HumanMessage"]);
      assert.match(String(xml[1]!.content), /^<thread>\n/);
    } finally {
      await tk.close();
    }
  });
});
