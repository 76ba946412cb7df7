/**
 * `ThreadChatMessageHistory`: a LangChain chat history kept in a thread. A separate entry point
 * (`threadkeeper/langchain`) because it extends a class of the optional peer dependency
 * `@langchain/core`, which the main entry point must not load.
 */
import { BaseListChatMessageHistory } from "@langchain/core/chat_history";
import type { BaseMessage } from "@langchain/core/messages";
import { storedToLangChainMessages, toStoredMessages } from "./langchain.js";
import type { Thread } from "./thread.js";
import type { RenderOptions } from "./types.js";

export interface ThreadChatMessageHistoryOptions {
  /** The render options of `getMessages` (standard context mode unless the thread says otherwise). */
  render?: Omit<RenderOptions, "fromEvent">;
  /** The iteration of the events `addMessages` appends: a number, or asked for each call. Default 0. */
  iteration?: number | (() => number);
}

/**
 * A chat history backed by a thread: `getMessages` renders the thread as messages, `addMessages`
 * appends them as events (through `messages/toEvents`, the render's inverse, with
 * `keepBlockForms`: images, files and audio come back in the block form they were given in, their
 * bytes kept as blobs), `clear` empties it.
 */
export class ThreadChatMessageHistory extends BaseListChatMessageHistory {
  lc_namespace = ["threadkeeper", "chat_history"];

  constructor(
    readonly thread: Thread,
    private readonly options: ThreadChatMessageHistoryOptions = {},
  ) {
    super();
  }

  override async getMessages(): Promise<BaseMessage[]> {
    return storedToLangChainMessages(await this.thread.renderMessages(this.options.render));
  }

  override async addMessage(message: BaseMessage): Promise<void> {
    await this.addMessages([message]);
  }

  override async addMessages(messages: BaseMessage[]): Promise<void> {
    if (messages.length === 0) return;
    const { iteration } = this.options;
    const at = typeof iteration === "function" ? iteration() : iteration;
    // Each media block keeps its own form (v0.3 `source_type`, `image_url`, v1), so it comes back as written.
    const { events } = await this.thread.client.call<{ events: unknown[] }>("messages/toEvents", {
      messages: await toStoredMessages(messages),
      ...(at === undefined ? {} : { iteration: at }),
      keepBlockForms: true,
    });
    await this.thread.append(events as never);
  }

  override async clear(): Promise<void> {
    await this.thread.clear();
  }
}

export { isLangChainMessage, storedToLangChainMessages, toStoredMessages } from "./langchain.js";
