/**
 * What a `Thread` needs of the client it was opened on. `ThreadKeeper` implements it; the thread
 * module depends on this interface instead of on the client, so the modules import one way
 * (client → thread → this).
 */
import type { BaseMessage } from "@langchain/core/messages";
import type { CallOptions } from "./connection.js";
import type { AnyAgentEvent, StoredMessage } from "./types.js";

/** Where events of a conversion are stamped (`messages/toEvents`, `responses/toEvents`). */
export interface EventStamp {
  iteration?: number;
  timestamp?: number;
}

export interface ThreadClient {
  /** Sends any request; see `ThreadKeeper.call`. */
  call<T = unknown>(method: string, params?: object, options?: CallOptions): Promise<T>;
  /** Deletes a thread; `false` when there was none. */
  deleteThread(threadId: string, options?: CallOptions): Promise<boolean>;
  /** Stored or LangChain messages to events (`messages/toEvents`). */
  messagesToEvents(messages: readonly (StoredMessage | BaseMessage)[], options?: EventStamp & CallOptions): Promise<AnyAgentEvent[]>;
  /** OpenAI Responses input items to events (`responses/toEvents`). */
  responsesToEvents(items: readonly unknown[], options?: EventStamp & CallOptions): Promise<AnyAgentEvent[]>;
}
