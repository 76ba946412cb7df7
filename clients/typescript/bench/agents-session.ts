/**
 * An Agents SDK session of many turns kept by ThreadSession in the wire form, against the same
 * items kept as earlier versions kept them (each event holding the SDK's own item): what a turn
 * costs to add, what the whole session and its last items cost to read, and the bytes kept.
 * Each turn is what the SDK's Runner saves for a tool call with reasoning: a user message, a
 * reasoning item with 1 KiB of encrypted content, a call, its result and an answer. Medians of
 * each call, the two forms timed in turn (after a warm-up round).
 *
 *   THREADKEEPER_BIN=target/release/threadkeeper npm run build:test && node build-test/bench/agents-session.js
 */
import type { AgentInputItem } from "@openai/agents-core";
import { ThreadKeeper } from "../src/index.js";
import { fromResponsesItem, ThreadSession, toResponsesItem } from "../src/openai-agents.js";
import type { Thread } from "../src/thread.js";
import type { OpenAIResponsesInputItem } from "../src/types.js";

const TURNS = Number(process.env.BENCH_TURNS ?? 500);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);

type Item = Record<string, unknown>;

function turn(n: number): AgentInputItem[] {
  const encrypted = "gAAAA" + "x".repeat(1019);
  return [
    { type: "message", role: "user", content: `Weather in city ${n}?` },
    {
      type: "reasoning",
      id: `rs_${n}`,
      content: [{ type: "input_text", text: `One city, number ${n}.`, providerData: { type: "summary_text" } }],
      providerData: { type: "reasoning", id: `rs_${n}`, encrypted_content: encrypted },
    },
    { type: "function_call", callId: `call_${n}`, name: "weather", arguments: `{"city":"c${n}"}`, status: "completed", providerData: { type: "function_call" } },
    { type: "function_call_result", name: "weather", callId: `call_${n}`, status: "completed", output: { type: "text", text: `sunny in c${n}, 21 degrees` } },
    {
      type: "message",
      id: `msg_${n}`,
      role: "assistant",
      status: "completed",
      content: [{ type: "output_text", text: `City ${n} is sunny.`, providerData: { annotations: [], logprobs: [] } }],
      providerData: {},
    },
  ];
}

/** Items appended as earlier versions of the session did: each event keeping the SDK's item. */
async function appendInSdkForm(tk: ThreadKeeper, thread: Thread, items: AgentInputItem[]): Promise<void> {
  const converted = items.map(toResponsesItem);
  const { events } = await tk.call<{ events: Item[] }>("responses/toEvents", { items: converted, keepItems: true });
  let next = 0;
  for (const event of events) {
    const block = event.block as Item | undefined;
    const reasoning = event.type === "turn_block" && block?.kind === "reasoning";
    if ("responsesItem" in event ? event.responsesItem === null : !reasoning) continue;
    const item = items[next++]!;
    const same = JSON.stringify(fromResponsesItem(converted[next - 1] as OpenAIResponsesInputItem, new Map())) === JSON.stringify(item);
    if (reasoning && !("responsesItem" in event) && same) continue;
    event.responsesItem = item;
  }
  await thread.append(events as never);
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

type Form = "wire" | "sdk";
const FORMS: Form[] = ["wire", "sdk"];

/** Times `run` for each form in turn, `times` over, so that load on the machine hits both alike. */
async function alternate(times: number, run: (form: Form, i: number) => Promise<void>): Promise<Record<Form, number[]>> {
  const spent: Record<Form, number[]> = { wire: [], sdk: [] };
  for (let i = 0; i < times; i++) {
    for (const form of i % 2 === 0 ? FORMS : [...FORMS].reverse()) {
      const started = performance.now();
      await run(form, i);
      spent[form].push(performance.now() - started);
    }
  }
  return spent;
}

const tk = await ThreadKeeper.spawn({ args: ["--store", "memory"] });
try {
  const rows: Record<Form, Record<string, string>[]> = { wire: [], sdk: [] };
  for (let round = 0; round <= ROUNDS; round++) {
    const threads = { wire: await tk.openThread(), sdk: await tk.openThread() };
    const sessions = { wire: new ThreadSession(threads.wire), sdk: new ThreadSession(threads.sdk) };
    const add = await alternate(TURNS, (form, n) => (form === "wire" ? sessions.wire.addItems(turn(n)) : appendInSdkForm(tk, threads.sdk, turn(n))));
    const readAll = await alternate(3, async (form) => {
      if ((await sessions[form].getItems()).length !== TURNS * 5) throw new Error("items lost");
    });
    const readLast = await alternate(50, async (form) => void (await sessions[form].getItems(10)));
    if (round === 0) continue; // warm-up
    for (const form of FORMS) {
      rows[form].push({
        form,
        "add a turn (ms)": median(add[form]).toFixed(3),
        [`getItems() of ${TURNS * 5} items (ms)`]: median(readAll[form]).toFixed(1),
        "getItems(10) (ms)": median(readLast[form]).toFixed(3),
        "bytes kept per turn": String(Math.round(JSON.stringify(await threads[form].events()).length / TURNS)),
      });
    }
  }
  console.table([...rows.wire, ...rows.sdk]);
} finally {
  await tk.close();
}
