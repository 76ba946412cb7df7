import type { BaseMessage } from "@langchain/core/messages";
import type { ThreadKeeper } from "./client.js";
import { storedToLangChainMessages } from "./langchain.js";
import type {
  AnyAgentEvent,
  AppendResult,
  EventsPage,
  MessagesRender,
  RenderOptions,
  StoredMessage,
  TextRender,
  ThreadInfo,
  TurnFormat,
  TurnWriteOptions,
  XmlRender,
} from "./types.js";

/** One thread on the server. Obtained from `client.openThread()` or `client.importThread()`. */
export class Thread {
  readonly id: string;
  /** The thread as it was when opened; `version` and `eventCount` follow this handle's appends. */
  info: ThreadInfo;

  constructor(
    private readonly client: ThreadKeeper,
    info: ThreadInfo,
  ) {
    this.id = info.threadId;
    this.info = info;
  }

  /** Appends events, all or none. With `expectedVersion`, fails with -32003 unless the thread is at it. */
  async append(events: readonly AnyAgentEvent[], options: { expectedVersion?: number } = {}): Promise<AppendResult> {
    const result = await this.client.call<AppendResult>("thread/append", { threadId: this.id, events, ...options });
    this.info = { ...this.info, version: result.version, eventCount: result.eventCount };
    return result;
  }

  async render(format: "xml", options?: RenderOptions): Promise<XmlRender>;
  async render(format: "text", options?: RenderOptions): Promise<TextRender>;
  async render(format: "messages", options?: RenderOptions): Promise<MessagesRender>;
  async render(format: "xml" | "text" | "messages", options?: RenderOptions): Promise<XmlRender | TextRender | MessagesRender> {
    return this.client.call("thread/render", options ? { threadId: this.id, format, options } : { threadId: this.id, format });
  }

  /** The `<thread>` XML document, with the response prefix (option, else setting) appended. */
  async renderXml(options?: RenderOptions): Promise<string> {
    return (await this.render("xml", options)).text;
  }

  /** LangChain stored messages (standard or XML context mode). */
  async renderMessages(options?: RenderOptions): Promise<StoredMessage[]> {
    return (await this.render("messages", options)).messages;
  }

  /** The messages as one prompt text (`[User]\n…` blocks). */
  async renderText(options?: RenderOptions): Promise<string> {
    return (await this.render("text", options)).text;
  }

  /** The stored events, exactly as appended. */
  async events(options: { offset?: number; limit?: number } = {}): Promise<AnyAgentEvent[]> {
    return (await this.eventsPage(options)).events;
  }

  async eventsPage(options: { offset?: number; limit?: number } = {}): Promise<EventsPage> {
    return this.client.call<EventsPage>("thread/events", { threadId: this.id, ...options });
  }

  /** The thread as a turn document. */
  async export(format: TurnFormat, options?: TurnWriteOptions): Promise<string> {
    const params = options ? { threadId: this.id, format, options } : { threadId: this.id, format };
    return (await this.client.call<{ text: string }>("thread/export", params)).text;
  }

  /** Frees the server's in-memory state; a durable store keeps the thread, the memory store drops it. */
  async close(): Promise<void> {
    await this.client.call("thread/close", { threadId: this.id });
  }

  /** Deletes the thread; `false` when it was already gone. */
  async delete(): Promise<boolean> {
    return this.client.deleteThread(this.id);
  }

  /** The rendered messages as LangChain `BaseMessage`s (needs `@langchain/core`). */
  async toLangChainMessages(options?: RenderOptions): Promise<BaseMessage[]> {
    return storedToLangChainMessages(await this.renderMessages(options));
  }
}
