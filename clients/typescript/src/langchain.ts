import type { BaseMessage } from "@langchain/core/messages";
import type { StoredMessage } from "./types.js";

/** The part of `@langchain/core/messages` this package uses. */
export interface LangChainMessagesModule {
  mapStoredMessagesToChatMessages(messages: unknown[]): BaseMessage[];
  mapChatMessagesToStoredMessages(messages: BaseMessage[]): unknown[];
}

export type ModuleLoader = () => Promise<unknown>;

const defaultLoader: ModuleLoader = () => import("@langchain/core/messages");

function isModuleNotFound(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === "ERR_MODULE_NOT_FOUND" || code === "MODULE_NOT_FOUND" || code === "ERR_PACKAGE_PATH_NOT_EXPORTED";
}

async function loadLangChain(load: ModuleLoader, what: string): Promise<LangChainMessagesModule> {
  try {
    return (await load()) as LangChainMessagesModule;
  } catch (error) {
    if (isModuleNotFound(error)) {
      throw new Error(`${what} needs the optional peer dependency @langchain/core: install it with \`npm install @langchain/core\`.`, {
        cause: error,
      });
    }
    throw error;
  }
}

/** A LangChain message object (not a plain stored-message object). */
export function isLangChainMessage(message: unknown): message is BaseMessage {
  return typeof (message as { getType?: unknown } | null)?.getType === "function";
}

/**
 * LangChain messages in the stored form the server reads (`mapChatMessagesToStoredMessages`):
 * content, `id`, AI `tool_calls`, tool `tool_call_id` and `status` are all kept. Stored
 * messages given as they are pass through.
 */
export async function toStoredMessages(
  messages: readonly (BaseMessage | StoredMessage)[],
  load: ModuleLoader = defaultLoader,
): Promise<StoredMessage[]> {
  if (!messages.some(isLangChainMessage)) return messages as StoredMessage[];
  const module = await loadLangChain(load, "converting LangChain messages");
  return messages.map((message) =>
    isLangChainMessage(message) ? (module.mapChatMessagesToStoredMessages([message])[0] as StoredMessage) : message,
  );
}

/**
 * Converts stored messages into LangChain `BaseMessage`s with
 * `mapStoredMessagesToChatMessages` from the optional peer dependency `@langchain/core`;
 * a clear error when it is not installed.
 */
export async function storedToLangChainMessages(
  messages: StoredMessage[],
  load: ModuleLoader = defaultLoader,
): Promise<BaseMessage[]> {
  const module = await loadLangChain(load, "toLangChainMessages");
  return module.mapStoredMessagesToChatMessages(messages);
}
