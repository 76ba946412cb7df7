export { ThreadKeeper, type SpawnOptions, type OpenThreadOptions, type ExitStatus } from "./client.js";
export { Thread } from "./thread.js";
export { ThreadKeeperError, ServerExitedError, BinaryNotFoundError, ErrorCodes } from "./errors.js";
export { findBinary, type FindBinaryOptions } from "./discovery.js";
export { storedToLangChainMessages } from "./langchain.js";
export * from "./types.js";
