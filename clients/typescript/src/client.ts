import { spawn as spawnProcess, type ChildProcessWithoutNullStreams } from "node:child_process";
import {
  CancellationTokenSource,
  ConnectionError,
  createMessageConnection,
  ErrorCodes as RpcErrorCodes,
  ResponseError,
  StreamMessageReader,
  StreamMessageWriter,
  type CancellationToken,
  type MessageConnection,
} from "vscode-jsonrpc/node";
import { findBinary } from "./discovery.js";
import { ErrorCodes, ServerExitedError, ThreadKeeperError } from "./errors.js";
import { Thread } from "./thread.js";
import type {
  AnyAgentEvent,
  InitializeResult,
  ParsedToolCalls,
  SerializeOptions,
  StoredMessage,
  ThreadInfo,
  ThreadSettings,
  Turn,
  TurnFormat,
  TurnRead,
  TurnValidation,
  TurnWriteOptions,
} from "./types.js";

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
}

export interface OpenThreadOptions {
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

interface Pending {
  reject(error: unknown): void;
}

/** How long a failed write waits for the process exit that explains it. */
const EXIT_REPORT_WAIT_MS = 2_000;

/** A write to the server failed, or the connection is closed: the process is likely gone. */
function isTransportFailure(error: unknown): boolean {
  if (error instanceof ThreadKeeperError) return error.code === RpcErrorCodes.MessageWriteError && error.data === undefined;
  return error instanceof ConnectionError;
}

const FRAME_LIMIT = /^limit exceeded: maxFrameBytes is (\d+), got (\d+)$/;

function toThreadKeeperError(error: unknown): unknown {
  if (!(error instanceof ResponseError)) return error;
  const oversize = error.code === RpcErrorCodes.MessageWriteError ? FRAME_LIMIT.exec(error.message) : null;
  if (oversize) {
    // Refused before sending (see `FrameEncoder`): the same error the server would give.
    const data = { limit: "maxFrameBytes", value: Number(oversize[2]), max: Number(oversize[1]) };
    return new ThreadKeeperError(ErrorCodes.LimitExceeded, error.message, data, { cause: error });
  }
  return new ThreadKeeperError(error.code, error.message, error.data, { cause: error });
}

/**
 * Encodes messages as vscode-jsonrpc does, and refuses a request larger than the server's
 * `maxFrameBytes`: the server cannot read the id of a frame it refuses, so its error (id null)
 * could not be matched to the call, which would wait forever.
 */
class FrameEncoder {
  readonly name = "application/json";
  maxFrameBytes = Number.POSITIVE_INFINITY;

  async encode(message: unknown): Promise<Uint8Array> {
    const bytes = Buffer.from(JSON.stringify(message), "utf8");
    if (bytes.byteLength > this.maxFrameBytes) {
      throw new Error(`limit exceeded: maxFrameBytes is ${this.maxFrameBytes}, got ${bytes.byteLength}`);
    }
    return bytes;
  }
}

/**
 * A connection to one threadkeeper server process, speaking protocol v1 over its stdio.
 * Create it with `ThreadKeeper.spawn()`; end it with `close()`.
 */
export class ThreadKeeper {
  /** The server's answer to `initialize`. */
  readonly server: InitializeResult;
  readonly binary: string;

  private readonly child: ChildProcessWithoutNullStreams;
  private readonly connection: MessageConnection;
  private readonly pending = new Set<Pending>();
  private readonly exitedPromise: Promise<ExitStatus>;
  private stopped: ThreadKeeperError | undefined;

  private constructor(binary: string, child: ChildProcessWithoutNullStreams, connection: MessageConnection, exited: Promise<ExitStatus>) {
    this.binary = binary;
    this.child = child;
    this.connection = connection;
    this.exitedPromise = exited;
    this.server = undefined as unknown as InitializeResult; // set by spawn() after initialize
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

    const encoder = new FrameEncoder();
    const connection = createMessageConnection(
      new StreamMessageReader(child.stdout),
      new StreamMessageWriter(child.stdin, { charset: "utf-8", contentTypeEncoder: encoder }),
    );
    connection.onError(() => {});

    let spawnError: Error | undefined;
    const exited = new Promise<ExitStatus>((resolve) => {
      child.on("error", (error) => {
        spawnError = error;
        // 'close' may never come when the process could not start.
        if (child.pid === undefined) resolve({ exitCode: null, signal: null });
      });
      child.on("close", (exitCode, signal) => resolve({ exitCode, signal }));
    });
    const self = new ThreadKeeper(binary, child, connection, exited);
    void exited.then((status) => self.onExit(status, tail.text(), spawnError));
    connection.listen();

    try {
      const result = await self.call<InitializeResult>("initialize", {
        clientInfo: options.clientInfo ?? { name: "threadkeeper-js" },
        protocolVersion: 1,
      });
      (self as { server: InitializeResult }).server = result;
      const limits = result.capabilities.limits as { maxFrameBytes?: unknown } | undefined;
      if (typeof limits?.maxFrameBytes === "number") encoder.maxFrameBytes = limits.maxFrameBytes;
    } catch (error) {
      child.kill("SIGKILL");
      throw error;
    }
    return self;
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
    for (const p of this.pending) p.reject(this.stopped);
    this.pending.clear();
    this.connection.dispose();
  }

  /**
   * Sends any request; resolves with its result or rejects with a `ThreadKeeperError`. Aborting
   * `signal` sends `$/cancelRequest`: a read-only request still running then rejects with -32800.
   */
  call<T = unknown>(method: string, params?: object, options: { signal?: AbortSignal } = {}): Promise<T> {
    if (this.stopped) return Promise.reject(this.stopped);
    const { signal } = options;
    if (signal?.aborted) return Promise.reject(new ThreadKeeperError(ErrorCodes.Cancelled, "request cancelled before it was sent"));
    let token: CancellationToken | undefined;
    if (signal) {
      const source = new CancellationTokenSource();
      signal.addEventListener("abort", () => source.cancel(), { once: true });
      token = source.token;
    }
    return new Promise<T>((resolve, reject) => {
      const entry: Pending = { reject };
      this.pending.add(entry);
      let sent: Promise<T>;
      try {
        if (params === undefined) sent = token ? this.connection.sendRequest<T>(method, token) : this.connection.sendRequest<T>(method);
        else sent = token ? this.connection.sendRequest<T>(method, params, token) : this.connection.sendRequest<T>(method, params);
      } catch (error) {
        sent = Promise.reject(error);
      }
      sent.then(
        (result) => {
          this.pending.delete(entry);
          resolve(result);
        },
        (error: unknown) => {
          this.pending.delete(entry);
          const converted = toThreadKeeperError(error);
          if (this.stopped || !isTransportFailure(converted)) {
            reject(this.stopped ?? converted);
            return;
          }
          // The pipe broke before the exit was seen: report the exit (status, stderr) instead.
          void this.exitedWithin(EXIT_REPORT_WAIT_MS).then(() => reject(this.stopped ?? converted));
        },
      );
    });
  }

  private async exitedWithin(ms: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([this.exitedPromise, new Promise((resolve) => (timer = setTimeout(resolve, ms)))]);
    clearTimeout(timer);
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

  async openThread(options: OpenThreadOptions = {}): Promise<Thread> {
    const info = await this.call<ThreadInfo>("thread/open", options);
    return new Thread(this, info);
  }

  async listThreads(): Promise<ThreadInfo[]> {
    return (await this.call<{ threads: ThreadInfo[] }>("thread/list", {})).threads;
  }

  /** Deletes a thread; `false` when there was none. */
  async deleteThread(threadId: string): Promise<boolean> {
    return (await this.call<{ deleted: boolean }>("thread/delete", { threadId })).deleted;
  }

  /**
   * Creates a thread from a turn document made by `thread.export`. Without `threadId` the thread
   * gets the document's turn id (the exported thread's id); a thread that already has events
   * under that id is not replaced: -32006 (thread exists).
   */
  async importThread(text: string, format: TurnFormat, options: { threadId?: string } = {}): Promise<Thread> {
    const info = await this.call<ThreadInfo>("thread/import", { text, format, ...options });
    return new Thread(this, info);
  }

  // Stateless methods.

  async escapeXml(text: string): Promise<string> {
    return (await this.call<{ text: string }>("xml/escape", { text })).text;
  }

  async serializeThreadToXml(events: readonly AnyAgentEvent[], options?: SerializeOptions): Promise<string> {
    return (await this.call<{ text: string }>("xml/serializeThread", options ? { events, options } : { events })).text;
  }

  async parseThreadXml(text: string): Promise<AnyAgentEvent[]> {
    return (await this.call<{ events: AnyAgentEvent[] }>("xml/parseThread", { text })).events;
  }

  async messagesToXml(messages: readonly StoredMessage[]): Promise<string> {
    return (await this.call<{ text: string }>("messages/toXml", { messages })).text;
  }

  async messagesToText(messages: readonly StoredMessage[]): Promise<string> {
    return (await this.call<{ text: string }>("messages/toText", { messages })).text;
  }

  async parseToolCalls(text: string): Promise<ParsedToolCalls> {
    return this.call<ParsedToolCalls>("toolCalls/parse", { text });
  }

  // Turns.

  async turnToYaml(turn: Turn, options?: TurnWriteOptions): Promise<string> {
    return (await this.call<{ text: string }>("turns/toYaml", options ? { turn, options } : { turn })).text;
  }

  async turnFromYaml(text: string): Promise<TurnRead> {
    return this.call<TurnRead>("turns/fromYaml", { text });
  }

  async turnToJson(turn: Turn, options?: TurnWriteOptions): Promise<string> {
    return (await this.call<{ text: string }>("turns/toJson", options ? { turn, options } : { turn })).text;
  }

  async turnFromJson(text: string): Promise<TurnRead> {
    return this.call<TurnRead>("turns/fromJson", { text });
  }

  async validateTurn(turn: Turn, options: { strict?: boolean } = {}): Promise<TurnValidation> {
    return this.call<TurnValidation>("turns/validate", { turn, ...options });
  }

  /**
   * Ends the server: `shutdown`, then `exit`, then waits for the process (killing it if it
   * lingers). Calls made afterwards reject. Resolves with the exit status (0 after a clean shutdown).
   */
  async close(): Promise<ExitStatus> {
    if (!this.stopped) {
      try {
        await this.call("shutdown");
        await this.connection.sendNotification("exit");
      } catch {
        // The process is gone already; the exit status says how it ended.
      }
      this.stopped ??= new ServerExitedError("the client was closed", null, null, "");
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
}
