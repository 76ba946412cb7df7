import type { BaseMessage } from "@langchain/core/messages";
import type { StoredMessage } from "./types.js";

/** The part of `@langchain/core/messages` this package uses. */
export interface LangChainMessagesModule {
  mapStoredMessagesToChatMessages(messages: unknown[]): BaseMessage[];
}

export type ModuleLoader = () => Promise<unknown>;

const defaultLoader: ModuleLoader = () => import("@langchain/core/messages");

function isModuleNotFound(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === "ERR_MODULE_NOT_FOUND" || code === "MODULE_NOT_FOUND" || code === "ERR_PACKAGE_PATH_NOT_EXPORTED";
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
  let module: LangChainMessagesModule;
  try {
    module = (await load()) as LangChainMessagesModule;
  } catch (error) {
    if (isModuleNotFound(error)) {
      throw new Error(
        "toLangChainMessages needs the optional peer dependency @langchain/core: " +
          "install it with `npm install @langchain/core`.",
        { cause: error },
      );
    }
    throw error;
  }
  return module.mapStoredMessagesToChatMessages(messages);
}
