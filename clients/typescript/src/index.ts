export { ThreadKeeper, spawn, type SpawnOptions, type OpenThreadOptions, type ExitStatus, type CallOptions } from "./client.js";
export { Thread, type EventsOptions } from "./thread.js";
export type { ThreadClient, EventStamp } from "./thread-client.js";
export { ThreadKeeperError, ServerExitedError, BinaryNotFoundError, CancelledError, TimeoutError, ErrorCodes } from "./errors.js";
export { findBinary, type FindBinaryOptions } from "./discovery.js";
export { storedToLangChainMessages } from "./langchain.js";
export { textPart, imagePart, filePart, audioPart, textOf } from "./parts.js";
export * from "./types.js";
