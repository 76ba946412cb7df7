/**
 * `ThreadSession`: an OpenAI Agents SDK session (`@openai/agents-core` `Session`) kept in a
 * thread. A separate entry point (`threadkeeper/openai-agents`) so the main one needs no SDK.
 *
 * The SDK's items are its own camelCase form (`callId`, `function_call_result`, content parts);
 * the server speaks the Responses API's input items (`call_id`, `function_call_output`, text).
 * This module maps between the two; the server turns Responses items into events
 * (`responses/toEvents`) and events back into them (the "openai-responses" render).
 */
import type { AgentInputItem, Session } from "@openai/agents-core";
import type { Thread } from "./thread.js";
import type { OpenAIResponsesInputItem, ProviderRenderOptions } from "./types.js";

type Item = Record<string, unknown>;

/** The text of SDK content: a string, or the text of its text parts (`input_text`, `output_text`, `refusal`). */
function contentText(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .map((part: Item) => (typeof part.text === "string" ? part.text : typeof part.refusal === "string" ? part.refusal : ""))
    .join("");
}

/** A function result's output as the text the Responses API carries. */
function outputText(output: unknown): string {
  if (typeof output === "string") return output;
  if (output && typeof output === "object" && (output as Item).type === "text") return String((output as Item).text);
  return JSON.stringify(output);
}

/** An SDK item as a Responses API input item; kinds the server does not convert pass as they are (it names them). */
export function toResponsesItem(item: AgentInputItem): unknown {
  const fields = item as Item;
  switch (fields.type ?? "message") {
    case "message":
      return { type: "message", role: fields.role, content: contentText(fields.content) };
    case "function_call":
      return { type: "function_call", call_id: fields.callId, name: fields.name, arguments: fields.arguments };
    case "function_call_result":
      return { type: "function_call_output", call_id: fields.callId, output: outputText(fields.output) };
    case "reasoning": {
      const encrypted = (fields.providerData as Item | undefined)?.encryptedContent ?? (fields.providerData as Item | undefined)?.encrypted_content;
      const summary = ((fields.content as Item[] | undefined) ?? []).map((part) => ({ type: "summary_text", text: String(part.text ?? "") }));
      return { type: "reasoning", id: fields.id, summary, ...(encrypted === undefined ? {} : { encrypted_content: encrypted }) };
    }
    default:
      return item;
  }
}

/** A Responses API input item as the SDK's item; `names` gives a function result its call's name. */
export function fromResponsesItem(item: OpenAIResponsesInputItem, names: Map<string, string>): AgentInputItem {
  switch (item.type) {
    case "message":
      return item.role === "assistant"
        ? { type: "message", role: "assistant", status: "completed", content: [{ type: "output_text", text: item.content }] }
        : { type: "message", role: "user", content: item.content };
    case "function_call":
      names.set(item.call_id, item.name);
      return { type: "function_call", callId: item.call_id, name: item.name, arguments: item.arguments, status: "completed" };
    case "function_call_output":
      return {
        type: "function_call_result",
        callId: item.call_id,
        name: names.get(item.call_id) ?? "",
        status: "completed",
        output: { type: "text", text: item.output },
      };
    case "reasoning":
      return {
        type: "reasoning",
        id: item.id,
        content: item.summary.map((part) => ({ type: "input_text", text: part.text })),
        providerData: { encryptedContent: item.encrypted_content },
      };
  }
}

/** The name of every call, by call id, for the function results that answer them. */
function callNames(input: readonly OpenAIResponsesInputItem[]): Map<string, string> {
  const names = new Map<string, string>();
  for (const item of input) if (item.type === "function_call") names.set(item.call_id, item.name);
  return names;
}

export interface ThreadSessionOptions {
  /** The iteration of the events `addItems` appends: a number, or asked for each call. Default 0. */
  iteration?: number | (() => number);
  /** Options of the "openai-responses" render `getItems` reads. */
  render?: ProviderRenderOptions;
}

/**
 * A session of the OpenAI Agents SDK backed by a thread: `new Runner().run(agent, input, {
 * session: new ThreadSession(thread) })`. The thread's instructions and system messages come
 * back first, as one system item (the Responses form gathers them into `instructions`).
 */
export class ThreadSession implements Session {
  constructor(
    readonly thread: Thread,
    private readonly options: ThreadSessionOptions = {},
  ) {}

  async getSessionId(): Promise<string> {
    return this.thread.id;
  }

  async getItems(limit?: number): Promise<AgentInputItem[]> {
    const items = await this.readItems();
    return limit === undefined ? items : limit <= 0 ? [] : items.slice(-limit);
  }

  private async readItems(): Promise<AgentInputItem[]> {
    const { instructions, input } = await this.thread.renderOpenAIResponses(this.options.render);
    const names = new Map<string, string>();
    const items = input.map((item) => fromResponsesItem(item, names));
    if (instructions !== undefined) items.unshift({ type: "message", role: "system", content: instructions });
    return items;
  }

  async addItems(items: AgentInputItem[]): Promise<void> {
    if (items.length === 0) return;
    const { iteration } = this.options;
    const events = await this.thread.client.responsesToEvents(items.map(toResponsesItem), {
      iteration: typeof iteration === "function" ? iteration() : iteration,
    });
    await this.thread.append(events);
  }

  /**
   * Removes the newest item: its event is popped (`thread/pop`). Answers the item as it was read
   * before; an item the render made up (the error answer of a call that got none) has no event
   * of its own, so popping it removes its call's.
   */
  async popItem(): Promise<AgentInputItem | undefined> {
    const { input } = await this.thread.renderOpenAIResponses(this.options.render);
    if (input.length === 0) return undefined;
    const { events } = await this.thread.pop({ count: 1 });
    return events.length === 0 ? undefined : fromResponsesItem(input.at(-1)!, callNames(input));
  }

  /** Empties the thread, keeping its id, settings and metadata (delete, then open again). */
  async clearSession(): Promise<void> {
    await this.thread.clear();
  }
}
