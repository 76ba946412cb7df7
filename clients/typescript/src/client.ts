import { spawn as spawnProcess, type ChildProcessWithoutNullStreams } from "node:child_process";
import { Connection, type CallOptions } from "./connection.js";
import type { BaseMessage } from "@langchain/core/messages";
import { findBinary } from "./discovery.js";
import { toStoredMessages } from "./langchain.js";
import { ServerExitedError } from "./errors.js";
import { fromBase64, toBase64 } from "./parts.js";
import { Thread } from "./thread.js";
import type { EventStamp, ThreadClient } from "./thread-client.js";
import type {
  AnyAgentEvent,
  BinaryData,
  BlobContent,
  BlobInfo,
  InitializeResult,
  ParsedReply,
  ParsedToolCalls,
  PromptCliOptions,
  SearchParams,
  SearchResult,
  SerializeOptions,
  StoredMessage,
  ThreadInfo,
  ThreadSettings,
  Turn,
  TurnFormat,
  HostSessionFormat,
  TurnRead,
  TurnValidation,
  TurnWriteOptions,
} from "./types.js";

export type { CallOptions } from "./connection.js";

export interface SpawnOptions {
  /** Path of the server binary (or a name looked up on PATH); see `findBinary` for the default. */
  binary?: string;
  /** Arguments for the server, e.g. `["--store", "memory"]`. None by default: the server picks its store. */
  args?: string[];
  /** Environment of the server process; defaults to this process's. */
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  /** Sent in `initialize`. */
  clientInfo?: { name: string; version?: string };
  /** Called with everything the server writes to stderr (its logs). */
  onStderr?: (text: string) => void;
  /** The `timeoutMs` of every call that gives none (see `CallOptions`); none by default. */
  timeoutMs?: number;
}

export interface OpenThreadOptions extends CallOptions {
  threadId?: string;
  settings?: ThreadSettings;
  metadata?: Record<string, unknown>;
}

export interface ExitStatus {
  exitCode: number | null;
  signal: string | null;
}

/** How much of the server's stderr is kept for error messages. */
const STDERR_TAIL_BYTES = 8 * 1024;
/** How long `close()` waits for the process to end before killing it. */
const CLOSE_TIMEOUT_MS = 5_000;

class StderrTail {
  private chunks: Buffer[] = [];
  private size = 0;

  push(chunk: Buffer): void {
    this.chunks.push(chunk);
    this.size += chunk.length;
    while (this.size - (this.chunks[0]?.length ?? 0) >= STDERR_TAIL_BYTES) {
      this.size -= this.chunks.shift()!.length;
    }
  }

  text(): string {
    const all = Buffer.concat(this.chunks);
    return all.subarray(Math.max(0, all.length - STDERR_TAIL_BYTES)).toString("utf8").trim();
  }
}

/**
 * A connection to one threadkeeper server process, speaking protocol v1 over its stdio.
 * Create it with `ThreadKeeper.spawn()` (or `spawn()`); end it with `close()`, or let
 * `await using` do it. While no call is waiting, the process and its pipes do not keep Node
 * running: a script that forgets `close()` still exits, and the server then sees its stdin
 * close and exits too.
 */
export class ThreadKeeper implements ThreadClient, AsyncDisposable {
  /** The server's answer to `initialize`. */
  readonly server: InitializeResult;
  readonly binary: string;

  private readonly child: ChildProcessWithoutNullStreams;
  private readonly connection: Connection;
  private readonly exitedPromise: Promise<ExitStatus>;
  private readonly defaultTimeoutMs: number | undefined;
  private stopped: ServerExitedError | undefined;
  /** Set by `close()`: Node is kept running until the process has exited. */
  private closing = false;
  /**
   * What keeps Node running while calls wait: one referenced timer that never fires. The process
   * and its pipes stay unreferenced throughout; switching one timer per call instead of those
   * four handles twice saves a small call most of a microsecond (it is memory the call would
   * otherwise touch, cold after each switch to the server).
   */
  private readonly hold = setInterval(() => {}, 2 ** 31 - 1).unref();

  private constructor(binary: string, child: ChildProcessWithoutNullStreams, exited: Promise<ExitStatus>, timeoutMs: number | undefined) {
    this.binary = binary;
    this.child = child;
    this.exitedPromise = exited;
    this.defaultTimeoutMs = timeoutMs;
    this.server = undefined as unknown as InitializeResult; // set by spawn() after initialize
    this.connection = new Connection(child.stdout, child.stdin, {
      onBusy: (busy) => this.keepAlive(busy || this.closing),
      onStray: () => {},
    });
    // Their events still come while Node runs; only `hold` decides whether it keeps running.
    for (const handle of [child, child.stdin, child.stdout, child.stderr] as { unref?(): void }[]) handle.unref?.();
  }

  /** Starts a server process and initializes it. */
  static async spawn(options: SpawnOptions = {}): Promise<ThreadKeeper> {
    const binary = findBinary({ binary: options.binary, env: options.env });
    const child = spawnProcess(binary, options.args ?? [], {
      env: options.env ?? process.env,
      cwd: options.cwd,
      stdio: ["pipe", "pipe", "pipe"],
    });
    const tail = new StderrTail();
    child.stderr.on("data", (chunk: Buffer) => {
      tail.push(chunk);
      options.onStderr?.(chunk.toString("utf8"));
    });
    // A write to a dead process fails with EPIPE; the exit handler reports it instead.
    child.stdin.on("error", () => {});

    let spawnError: Error | undefined;
    const exited = new Promise<ExitStatus>((resolve) => {
      child.on("error", (error) => {
        spawnError = error;
        // 'close' may never come when the process could not start.
        if (child.pid === undefined) resolve({ exitCode: null, signal: null });
      });
      child.on("close", (exitCode, signal) => resolve({ exitCode, signal }));
    });
    const self = new ThreadKeeper(binary, child, exited, options.timeoutMs);
    void exited.then((status) => self.onExit(status, tail.text(), spawnError));

    try {
      const result = await self.call<InitializeResult>("initialize", {
        clientInfo: options.clientInfo ?? { name: "threadkeeper-js" },
        protocolVersion: 1,
      });
      (self as { server: InitializeResult }).server = result;
      const limits = result.capabilities.limits as { maxFrameBytes?: unknown } | undefined;
      if (typeof limits?.maxFrameBytes === "number") self.connection.maxFrameBytes = limits.maxFrameBytes;
    } catch (error) {
      child.kill("SIGKILL");
      throw error;
    }
    return self;
  }

  /** Keeps Node running while calls wait (or while closing), and lets it end otherwise. */
  private keepAlive(on: boolean): void {
    if (on) this.hold.ref();
    else this.hold.unref();
  }

  private onExit(status: ExitStatus, stderr: string, spawnError: Error | undefined): void {
    if (!this.stopped) {
      const how = status.signal ? `was killed by ${status.signal}` : `exited with status ${status.exitCode}`;
      const detail = spawnError ? `could not run ${this.binary}: ${spawnError.message}` : `the threadkeeper server ${how}`;
      this.stopped = new ServerExitedError(
        stderr ? `${detail}; its stderr ends with:\n${stderr}` : detail,
        status.exitCode,
        status.signal,
        stderr,
        spawnError,
      );
    }
    this.connection.close(this.stopped);
    clearInterval(this.hold);
  }

  /**
   * Sends any request; resolves with its result or rejects with a `ThreadKeeperError`. Aborting
   * `signal`, or `timeoutMs` passing, rejects at once with a `CancelledError` (-32800; a
   * `TimeoutError` for the timeout) and sends `$/cancelRequest`: a read-only request stops on
   * the server, a request that changes state still completes there.
   */
  call<T = unknown>(method: string, params?: object, options: CallOptions = {}): Promise<T> {
    return this.callField<T>(method, params, undefined, options);
  }

  /**
   * `call`, resolving with one field of the result (the whole result without `field`): the
   * methods that answer one value need no promise of their own around the call's.
   */
  private callField<T>(method: string, params: object | undefined, field: string | undefined, options: CallOptions): Promise<T> {
    if (this.stopped) return Promise.reject(this.stopped);
    const timeoutMs = options.timeoutMs ?? this.defaultTimeoutMs;
    return this.connection.request(method, params, timeoutMs === options.timeoutMs ? options : { ...options, timeoutMs }, field) as Promise<T>;
  }

  /** Resolves when the server process has ended. */
  get exited(): Promise<ExitStatus> {
    return this.exitedPromise;
  }

  /** The server's process id. */
  get pid(): number | undefined {
    return this.child.pid;
  }

  // Threads.

  async openThread(options: OpenThreadOptions = {}): Promise<Thread<ThreadKeeper>> {
    const { signal, timeoutMs, ...params } = options;
    const info = await this.call<ThreadInfo>("thread/open", params, { signal, timeoutMs });
    return new Thread(this, info);
  }

  listThreads(options: CallOptions = {}): Promise<ThreadInfo[]> {
    return this.callField<ThreadInfo[]>("thread/list", {}, "threads", options);
  }

  /**
   * The events of every stored thread matching `params.query`, best first, one page
   * (`thread/search`); pass `nextCursor` back as `cursor` for the next. A malformed query, limit,
   * cursor or filter is -32602 naming the field (`error.data.path`).
   */
  async search(params: SearchParams, options: CallOptions = {}): Promise<SearchResult> {
    return this.call<SearchResult>("thread/search", params, options);
  }

  /** Deletes a thread; `false` when there was none. */
  deleteThread(threadId: string, options: CallOptions = {}): Promise<boolean> {
    return this.callField<boolean>("thread/delete", { threadId }, "deleted", options);
  }

  /**
   * Creates a thread from a turn document made by `thread.export`. Without `threadId` the thread
   * gets the document's turn id (the exported thread's id); a thread that already has events
   * under that id is not replaced: -32006 (thread exists). With format "claude-code" or "codex",
   * `text` is an agent host's session file, read as the thread the host would resume
   * (`branches`: other branches and sidechains become threads of their own).
   */
  async importThread(
    text: string,
    format: TurnFormat | HostSessionFormat,
    options: { threadId?: string; branches?: boolean } & CallOptions = {},
  ): Promise<Thread<ThreadKeeper>> {
    const { signal, timeoutMs, branches, ...rest } = options;
    const params = branches === undefined ? { text, format, ...rest } : { text, format, ...rest, options: { branches } };
    const info = await this.call<ThreadInfo>("thread/import", params, { signal, timeoutMs });
    return new Thread(this, info);
  }

  // Blobs.

  /**
   * Keeps bytes in the blob store (`blob/put`) and answers their id (`sha256:…`, the same for
   * the same bytes), media type, size and an image's dimensions; a part can then name the blob.
   * `data` is bytes (a `Uint8Array` or `Buffer`), or a string that is base64 or a `data:` URL.
   * Without `mediaType` the server reads it from the bytes; a type the bytes contradict, bad
   * base64 or empty data is -32602, bytes over `maxBlobBytes` -32004.
   */
  async putBlob(data: BinaryData, options: { mediaType?: string } & CallOptions = {}): Promise<BlobInfo> {
    const { signal, timeoutMs, mediaType } = options;
    const params = mediaType === undefined ? { data: toBase64(data) } : { data: toBase64(data), mediaType };
    return this.call<BlobInfo>("blob/put", params, { signal, timeoutMs });
  }

  /** A blob with its bytes (`blob/get`); a blob the store does not hold is -32602. */
  async getBlob(blob: string, options: CallOptions = {}): Promise<BlobContent> {
    const result = await this.call<Omit<BlobContent, "data"> & { data: string }>("blob/get", { blob }, options);
    return { ...result, data: fromBase64(result.data) };
  }

  /** What the store knows of a blob, without its bytes (`blob/stat`); one it does not hold is -32602. */
  async statBlob(blob: string, options: CallOptions = {}): Promise<BlobInfo> {
    return this.call<BlobInfo>("blob/stat", { blob }, options);
  }

  // Stateless methods.

  escapeXml(text: string, options: CallOptions = {}): Promise<string> {
    return this.callField<string>("xml/escape", { text }, "text", options);
  }

  async serializeThreadToXml(events: readonly AnyAgentEvent[], options: SerializeOptions & CallOptions = {}): Promise<string> {
    const { signal, timeoutMs, ...serialize } = options;
    const params = Object.keys(serialize).length > 0 ? { events, options: serialize } : { events };
    return this.callField<string>("xml/serializeThread", params, "text", { signal, timeoutMs });
  }

  parseThreadXml(text: string, options: CallOptions = {}): Promise<AnyAgentEvent[]> {
    return this.callField<AnyAgentEvent[]>("xml/parseThread", { text }, "events", options);
  }

  messagesToXml(messages: readonly StoredMessage[], options: CallOptions = {}): Promise<string> {
    return this.callField<string>("messages/toXml", { messages }, "text", options);
  }

  messagesToText(messages: readonly StoredMessage[], options: CallOptions = {}): Promise<string> {
    return this.callField<string>("messages/toText", { messages }, "text", options);
  }

  /**
   * Messages back to events (`messages/toEvents`, the inverse of the "messages" render): stored
   * messages, or LangChain message objects (converted to the stored form first, which needs
   * `@langchain/core`). Every event gets `iteration` (default 0) and `timestamp` when given.
   */
  async messagesToEvents(
    messages: readonly (StoredMessage | BaseMessage)[],
    options: EventStamp & CallOptions = {},
  ): Promise<AnyAgentEvent[]> {
    const { signal, timeoutMs, ...rest } = options;
    const stored = await toStoredMessages(messages);
    return this.callField<AnyAgentEvent[]>("messages/toEvents", { messages: stored, ...rest }, "events", { signal, timeoutMs });
  }

  /** OpenAI Responses input items back to events (`responses/toEvents`, the inverse of "openai-responses"). */
  async responsesToEvents(items: readonly unknown[], options: EventStamp & CallOptions = {}): Promise<AnyAgentEvent[]> {
    const { signal, timeoutMs, ...rest } = options;
    return this.callField<AnyAgentEvent[]>("responses/toEvents", { items, ...rest }, "events", { signal, timeoutMs });
  }

  async parseToolCalls(text: string, options: CallOptions = {}): Promise<ParsedToolCalls> {
    return this.call<ParsedToolCalls>("toolCalls/parse", { text }, options);
  }

  /** A CLI model's prompt for `messages` (`prompt/cli`); a thread's is `thread.promptCli()`. */
  async promptCli(messages: readonly StoredMessage[], options: Omit<PromptCliOptions, "options"> & CallOptions = {}): Promise<string> {
    const { signal, timeoutMs, ...rest } = options;
    return this.callField<string>("prompt/cli", { messages, ...rest }, "prompt", { signal, timeoutMs });
  }

  /** A CLI model's reply text as content, tool calls and the events to append (`prompt/parseReply`). */
  async parseReply(text: string, iteration: number, options: CallOptions = {}): Promise<ParsedReply> {
    return this.call<ParsedReply>("prompt/parseReply", { text, iteration }, options);
  }

  // Turns.

  turnToYaml(turn: Turn, options: TurnWriteOptions & CallOptions = {}): Promise<string> {
    return this.callField<string>("turns/toYaml", turnParams(turn, options), "text", options);
  }

  async turnFromYaml(text: string, options: CallOptions = {}): Promise<TurnRead> {
    return this.call<TurnRead>("turns/fromYaml", { text }, options);
  }

  turnToJson(turn: Turn, options: TurnWriteOptions & CallOptions = {}): Promise<string> {
    return this.callField<string>("turns/toJson", turnParams(turn, options), "text", options);
  }

  async turnFromJson(text: string, options: CallOptions = {}): Promise<TurnRead> {
    return this.call<TurnRead>("turns/fromJson", { text }, options);
  }

  async validateTurn(turn: Turn, options: { strict?: boolean } & CallOptions = {}): Promise<TurnValidation> {
    const { signal, timeoutMs, ...rest } = options;
    return this.call<TurnValidation>("turns/validate", { turn, ...rest }, { signal, timeoutMs });
  }

  /**
   * Ends the server: `shutdown`, then `exit`, then waits for the process (killing it if it
   * lingers). Calls made afterwards reject. Resolves with the exit status (0 after a clean shutdown).
   */
  async close(): Promise<ExitStatus> {
    this.closing = true;
    this.keepAlive(true);
    if (!this.stopped) {
      try {
        await this.call("shutdown");
        this.connection.notify("exit");
      } catch {
        // The process is gone already; the exit status says how it ended.
      }
      this.stopped ??= new ServerExitedError("the client was closed", null, null, "");
      this.connection.close(this.stopped);
      this.child.stdin.end();
    }
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<"timeout">((resolve) => {
      timer = setTimeout(() => resolve("timeout"), CLOSE_TIMEOUT_MS);
    });
    const outcome = await Promise.race([this.exitedPromise, timeout]);
    clearTimeout(timer);
    if (outcome === "timeout") {
      this.child.kill("SIGKILL");
      return this.exitedPromise;
    }
    return outcome;
  }

  /** `await using tk = await spawn()` closes the server at the end of the block. */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }
}

/** The params of `turns/toYaml` and `turns/toJson`: the write options without the call options. */
function turnParams(turn: Turn, options: TurnWriteOptions & CallOptions): object {
  const { signal: _signal, timeoutMs: _timeoutMs, ...write } = options;
  return Object.keys(write).length > 0 ? { turn, options: write } : { turn };
}

/** Starts a server process and initializes it: `ThreadKeeper.spawn(options)`. */
export function spawn(options: SpawnOptions = {}): Promise<ThreadKeeper> {
  return ThreadKeeper.spawn(options);
}
