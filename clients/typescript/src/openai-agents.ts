/**
 * `ThreadSession`: an OpenAI Agents SDK session (`@openai/agents-core` `Session`) kept in a
 * thread. A separate entry point (`threadkeeper/openai-agents`) so the main one needs no SDK.
 *
 * The SDK's items are its own camelCase form (`callId`, `function_call_result`, content parts);
 * a session thread keeps the Responses API's wire items (`call_id`, `function_call_output`), as
 * the Python SDK holds them, converted at this edge (`./agents-wire.ts`); the server turns them
 * into events (`responses/toEvents`) and gives them back (`responses/fromEvents`).
 * `toResponsesItem`/`fromResponsesItem` are the older, text-only mapping of the render's items.
 */
import type { AgentInputItem, Session } from "@openai/agents-core";
import { fromWireItem, isItemDifference, isSdkForm, itemDifference, toWireItem, withDifference } from "./agents-wire.js";
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

export { fromWireItem, toWireItem, type ItemDifference } from "./agents-wire.js";

/** An SDK item as a Responses API input item in the render's text-only form; kinds the server does not convert pass as they are (it names them). */
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

/** The event field `responses/toEvents` keeps an item in (`keepItems`); `null`: made from no item. */
const KEPT = "responsesItem";

/**
 * The event field that keeps what the SDK's item has beyond its wire item (an `ItemDifference`,
 * `{}` when nothing), so that the item comes back exactly; other readers (the Python SDK) ignore
 * it. Every event this session writes for an item has it.
 */
const BESIDE = "agentsJs";

/** The event field that says where a kept item's media bytes are held as blobs (`keepMediaAsBlobs`). */
const MEDIA = "responsesItemBlobs";

function isRecordValue(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

type StoredEvent = Record<string, unknown>;

/** Whether an event was written with its item kept (by this session, or any `keepItems` conversion). */
function keptItem(event: StoredEvent): boolean {
  return KEPT in event;
}

/**
 * The reasoning item a reasoning block's event describes whole (`{type, id, summary,
 * encrypted_content?}`, as `responses/fromEvents` reads it), or nothing for any other event.
 */
function describedItem(event: StoredEvent): Item | undefined {
  const block = event.block as Item | undefined;
  if (event.type !== "turn_block" || block?.kind !== "reasoning") return undefined;
  const payload = block.payload as Item | undefined;
  if (typeof payload?.item_id !== "string" || !("summary" in payload)) return undefined;
  const encrypted = "encrypted_content" in payload ? { encrypted_content: payload.encrypted_content } : {};
  return { type: "reasoning", id: payload.item_id, summary: payload.summary, ...encrypted };
}

/** Whether one event gives an item of its own: it kept one, or it is a reasoning block that describes one. */
function givesAnItem(event: StoredEvent): boolean {
  return keptItem(event) ? event[KEPT] !== null : describedItem(event) !== undefined;
}

/** A kept item as the SDK reads it: an item kept in the SDK's form (an earlier version's) as it is, a wire item converted. */
function readBackItem(kept: Item): Item {
  return isSdkForm(kept) ? kept : fromWireItem(kept);
}

/** The item of an event that gives one (a kept item, or a reasoning block that describes its wire item). */
function ownItem(event: StoredEvent): AgentInputItem {
  return itemOf(event, keptItem(event) ? (event[KEPT] as Item) : describedItem(event)!);
}

/**
 * The item of an event that gives one, from its wire item: with what this session kept beside
 * it; an item an earlier version kept in the SDK's form as it is; a reasoning block nothing was
 * kept beside (an earlier version kept such an item so when it read back the same) as earlier
 * versions read it; any other wire item (the Python SDK's) as the SDK reads it.
 */
function itemOf(event: StoredEvent, wire: Item): AgentInputItem {
  const difference = event[BESIDE];
  if (isItemDifference(difference)) return withDifference(readBackItem(wire), difference) as AgentInputItem;
  if (isSdkForm(wire)) return wire as AgentInputItem;
  if (!keptItem(event)) return JSON.parse(JSON.stringify(fromResponsesItem(wire as unknown as OpenAIResponsesInputItem, new Map()))) as AgentInputItem;
  return fromWireItem(wire) as AgentInputItem;
}

export interface ThreadSessionOptions {
  /**
   * The iteration of the events `addItems` appends: a number, or asked for each call. Default 0.
   * `"turn"` numbers them as the Python client's session does, so a session both SDKs take turns
   * on counts its turns alike: a call whose first item is a user message opens the iteration
   * after the thread's last event's, any other call continues it.
   */
  iteration?: number | (() => number) | "turn";
  /**
   * Options of the "openai-responses" render `getItems` reads a thread with that none of its
   * events kept an item (written before items were kept, or by something else).
   */
  render?: ProviderRenderOptions;
}

/**
 * A session of the OpenAI Agents SDK backed by a thread: `new Runner().run(agent, input, {
 * session: new ThreadSession(thread) })`. Each item added is one event that keeps the item in the
 * Responses API's wire form (`responses/toEvents` with `keepItems`), the form the Python SDK's
 * items have, so the Python client's `ThreadSession` continues the same session; what the SDK's
 * item has beyond its wire form is kept beside it (`agentsJs`), so `getItems` gives the items
 * exactly as added and `popItem` removes and returns the newest one. Items another SDK added read
 * as the SDK reads those wire items; items an earlier version kept in the SDK's own form read as
 * they were. The model input is the thread's render as ever. A thread none of whose events kept
 * an item reads as its render (its instructions and system messages first, as one system item).
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
    if (limit !== undefined && limit <= 0) return [];
    if (limit === undefined) return this.itemsOf((await this.thread.events()) as StoredEvent[]);
    // One event per item, mostly: read back from the end until there are enough.
    for (let tail = limit; ; tail *= 2) {
      const page = await this.thread.eventsPage({ tail });
      const items = await this.itemsOf(page.events as StoredEvent[]);
      if (items.length >= limit || page.events.length >= page.eventCount) return items.slice(-limit);
    }
  }

  /**
   * The events with each kept item whose media bytes the thread holds as blobs
   * (`responsesItemBlobs`) given whole again: the server puts the bytes back (`responses/fromEvents`).
   */
  private async withMedia(events: readonly StoredEvent[]): Promise<StoredEvent[]> {
    const held = events.filter((event) => MEDIA in event && isRecordValue(event[KEPT]));
    if (held.length === 0) return [...events];
    const { items } = await this.thread.client.call<{ items: Item[] }>("responses/fromEvents", { events: held });
    const whole = new Map(held.map((event, i) => [event, items[i]]));
    return events.map((event) => {
      const item = whole.get(event);
      if (item === undefined) return event;
      const { [MEDIA]: _blobs, ...rest } = event;
      return { ...rest, [KEPT]: item };
    });
  }

  /** The items of events: kept ones as they were added, runs of other events as the server reads them. */
  private async itemsOf(stored: readonly StoredEvent[]): Promise<AgentInputItem[]> {
    const events = await this.withMedia(stored);
    if (!events.some((event) => keptItem(event) || describedItem(event) !== undefined)) return this.renderedItems();
    const items: AgentInputItem[] = [];
    let run: StoredEvent[] = [];
    const flush = async () => {
      if (run.length > 0) items.push(...(await this.readBack(run)));
      run = [];
    };
    for (const event of events) {
      if (givesAnItem(event)) {
        await flush();
        items.push(ownItem(event));
      } else if (keptItem(event)) {
        await flush();
      } else {
        run.push(event);
      }
    }
    await flush();
    return items;
  }

  /** Events that kept no item (written before items were kept): the Responses items the server reads out of them, in the SDK's form. */
  private async readBack(events: readonly StoredEvent[]): Promise<AgentInputItem[]> {
    const { items } = await this.thread.client.call<{ items: Item[] }>("responses/fromEvents", { events });
    const names = new Map<string, string>();
    return items.map((item) =>
      item.role === "system" && item.type === "message"
        ? ({ type: "message", role: "system", content: String(item.content) } as AgentInputItem)
        : fromResponsesItem(item as unknown as OpenAIResponsesInputItem, names),
    );
  }

  /** A thread none of whose events kept an item: its render, as this session read every thread before. */
  private async renderedItems(): Promise<AgentInputItem[]> {
    const { instructions, input } = await this.thread.renderOpenAIResponses(this.options.render);
    const names = new Map<string, string>();
    const items = input.map((item) => fromResponsesItem(item, names));
    if (instructions !== undefined) items.unshift({ type: "message", role: "system", content: instructions });
    return items;
  }

  async addItems(items: AgentInputItem[]): Promise<void> {
    if (items.length === 0) return;

    // The items as the thread keeps them (JSON), in the wire form.
    const added = JSON.parse(JSON.stringify(items)) as Item[];
    const wires = JSON.parse(JSON.stringify(added.map(toWireItem))) as Item[];
    const { events } = await this.thread.client.call<{ events: StoredEvent[] }>("responses/toEvents", {
      items: wires,
      iteration: await this.iterationFor(added[0]!),
      keepItems: true,
      // Images' and files' bytes are stored once, as blobs, not as base64 inside the kept item.
      keepMediaAsBlobs: true,
    });
    // Each event that gives an item keeps, beside its wire item, what the SDK's item has beyond it.
    let next = 0;
    for (const event of events) {
      if (!givesAnItem(event)) continue;
      event[BESIDE] = itemDifference(added[next]!, readBackItem(wires[next]!));
      next++;
    }
    await this.thread.append(events as never);
  }

  /** The iteration of a call's events, by the `iteration` option. */
  private async iterationFor(first: Item): Promise<number | undefined> {
    const { iteration } = this.options;
    if (typeof iteration === "function") return iteration();
    if (iteration !== "turn") return iteration;
    const [last] = (await this.thread.eventsPage({ tail: 1 })).events as StoredEvent[];
    const current = typeof last?.iteration === "number" ? last.iteration : 0;
    const startsTurn = (first.type ?? "message") === "message" && first.role === "user";
    return last !== undefined && startsTurn ? current + 1 : current;
  }

  /**
   * Removes the newest item and answers it: its event goes (`thread/pop`, at the version read),
   * with the events after it that stand for no item (a question read back from its answer).
   */
  async popItem(): Promise<AgentInputItem | undefined> {
    for (let tail = 4; ; tail *= 2) {
      const page = await this.thread.eventsPage({ tail });
      const events = page.events as StoredEvent[];
      if (events.length === 0) return undefined;
      let last = events.length - 1;
      while (last >= 0 && keptItem(events[last]!) && events[last]![KEPT] === null) last--;
      if (last < 0 && events.length < page.eventCount) continue;
      if (last < 0) return undefined;
      const event = events[last]!;
      if (givesAnItem(event)) {
        const item = ownItem((await this.withMedia([event]))[0]!);
        await this.thread.pop({ count: events.length - last, expectedVersion: page.version });
        return item;
      }
      // An event that kept no item (an earlier version's): the last item as the thread reads,
      // and its last event goes, as before.
      const all = await this.thread.eventsPage();
      const items = await this.itemsOf(all.events as StoredEvent[]);
      await this.thread.pop({ count: 1, expectedVersion: all.version });
      return items.at(-1);
    }
  }

  /** Empties the thread, keeping its id, settings and metadata (delete, then open again). */
  async clearSession(): Promise<void> {
    await this.thread.clear();
  }
}
