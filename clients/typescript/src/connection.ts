/**
 * The JSON-RPC 2.0 client side of one connection: numbers requests, matches answers to them,
 * cancels on abort or timeout. Knows nothing of processes; `ThreadKeeper` wires it to a child.
 */
import type { Readable, Writable } from "node:stream";
import { CancelledError, ErrorCodes, ThreadKeeperError, TimeoutError } from "./errors.js";
import { FrameDecoder, frameText } from "./framing.js";

/** Options every request takes. */
export interface CallOptions {
  /** Aborting it sends `$/cancelRequest` and rejects the call with a `CancelledError`. */
  signal?: AbortSignal;
  /** After this many milliseconds the call is cancelled the same way, with a `TimeoutError`. */
  timeoutMs?: number;
}

interface Pending {
  resolve(result: unknown): void;
  reject(error: unknown): void;
  /** Undoes the abort listener and the timer. */
  cleanup(): void;
  /** Resolve with this field of the result instead of the whole (see `request`). */
  field: string | undefined;
}

interface ResponseMessage {
  id?: unknown;
  result?: unknown;
  error?: { code: number; message: string; data?: unknown };
}

const noCleanup = () => {};

/** `result[field]`, or undefined when the result is not an object. */
function fieldOf(result: unknown, field: string): unknown {
  return typeof result === "object" && result !== null ? (result as Record<string, unknown>)[field] : undefined;
}

/** Each method's `,"method":…,"params":` text, made once: most calls repeat a few methods. */
const methodText = new Map<string, string>();
const MAX_METHOD_TEXTS = 256;

/**
 * The request's JSON, byte for byte what `JSON.stringify({ jsonrpc, id, method, params })`
 * gives (params left out when undefined or not serializable, as that key would be), built
 * from its parts: a small call pays a third of the object's stringification.
 */
export function requestJson(id: number, method: string, params: unknown): string {
  let middle = methodText.get(method);
  if (middle === undefined) {
    middle = `,"method":${JSON.stringify(method)},"params":`;
    if (methodText.size < MAX_METHOD_TEXTS) methodText.set(method, middle);
  }
  const paramsJson = params === undefined ? undefined : (JSON.stringify(params) as string | undefined);
  if (paramsJson === undefined) return `{"jsonrpc":"2.0","id":${id},"method":${JSON.stringify(method)}}`;
  return `{"jsonrpc":"2.0","id":${id}${middle}${paramsJson}}`;
}

/** Frames queued in one tick are copied into one write up to this many bytes in all. */
const COALESCE_MAX_BYTES = 64 * 1024;

export interface ConnectionHooks {
  /** Called when the first request starts waiting and when the last one is settled. */
  onBusy(busy: boolean): void;
  /** Something came that is not an answer to a pending call (a framing error, id null, ...). */
  onStray(what: string): void;
}

export class Connection {
  /** A request larger than this is refused before it is sent (see `request`). */
  maxFrameBytes = Number.POSITIVE_INFINITY;

  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  private closedWith: unknown;
  /** Frames written in this tick, sent together when it ends (see `send`), and their bytes. */
  private queued: string[] = [];
  private queuedBytes = 0;

  constructor(
    input: Readable,
    private readonly output: Writable,
    private readonly hooks: ConnectionHooks,
  ) {
    const decoder = new FrameDecoder(
      (body) => this.receive(body),
      (reason) => hooks.onStray(`framing: ${reason}`),
    );
    input.on("data", (chunk: Buffer) => decoder.push(chunk));
  }

  get pendingCount(): number {
    return this.pending.size;
  }

  /**
   * Sends a request; resolves with its result or rejects with a `ThreadKeeperError`. On abort
   * or timeout the call rejects at once and the server is sent `$/cancelRequest`: a read-only
   * request stops there, a request that changes state still completes on the server. With
   * `field`, the call resolves with that field of the result (`undefined` when the result has
   * none): a method that answers one value needs no promise of its own around this one.
   */
  request(method: string, params: unknown, options: CallOptions = {}, field?: string): Promise<unknown> {
    if (this.closedWith !== undefined) return Promise.reject(this.closedWith);
    const { signal, timeoutMs } = options;
    if (signal?.aborted) return Promise.reject(new CancelledError(`${method} was cancelled before it was sent`, signal.reason));
    const id = this.nextId++;
    let json: string;
    try {
      json = requestJson(id, method, params);
    } catch (error) {
      // A BigInt or a cycle in the params: nothing was sent.
      return Promise.reject(new ThreadKeeperError(ErrorCodes.InvalidParams, `${method}: the params cannot be sent as JSON: ${String(error)}`, undefined, { cause: error }));
    }
    const bytes = Buffer.byteLength(json, "utf8");
    if (bytes > this.maxFrameBytes) {
      // The server could not say which request a frame it refuses belonged to (its error has
      // id null), so the call would wait forever: refuse it here with the same error.
      const data = { limit: "maxFrameBytes", value: bytes, max: this.maxFrameBytes };
      return Promise.reject(new ThreadKeeperError(ErrorCodes.LimitExceeded, `limit exceeded: maxFrameBytes is ${this.maxFrameBytes}, got ${bytes}`, data));
    }
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject, field, cleanup: signal || timeoutMs !== undefined ? this.watch(id, method, reject, signal, timeoutMs) : noCleanup });
      if (this.pending.size === 1) this.hooks.onBusy(true);
      this.send(json, bytes);
    });
  }

  /** Abandons call `id` on abort or timeout: rejects it and sends `$/cancelRequest`. Returns the undo. */
  private watch(id: number, method: string, reject: (error: unknown) => void, signal: AbortSignal | undefined, timeoutMs: number | undefined): () => void {
    const abandon = (error: ThreadKeeperError) => {
      if (!this.settle(id)) return;
      this.notify("$/cancelRequest", { id });
      reject(error);
    };
    const onAbort = () => abandon(new CancelledError(`${method} was cancelled`, signal!.reason));
    signal?.addEventListener("abort", onAbort, { once: true });
    const timer = timeoutMs === undefined ? undefined : setTimeout(() => abandon(new TimeoutError(method, timeoutMs)), timeoutMs);
    return () => {
      if (timer) clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
    };
  }

  /** Sends a notification (no answer). Nothing is sent once the connection is closed. */
  notify(method: string, params?: unknown): void {
    if (this.closedWith !== undefined) return;
    const json = JSON.stringify(params === undefined ? { jsonrpc: "2.0", method } : { jsonrpc: "2.0", method, params });
    this.send(json, Buffer.byteLength(json, "utf8"));
  }

  /**
   * Queues a frame; the frames queued in one tick go out in one write when it ends. Requests
   * issued together (an append and the render after it) then cost the server one read and the
   * pipe one wake-up instead of one each, and their order is kept.
   */
  private send(json: string, bodyBytes: number): void {
    // Kept as text: the pipe's stream encodes it once as it writes, instead of a buffer filled here.
    const frame = frameText(json, bodyBytes);
    this.queued.push(frame);
    this.queuedBytes += frame.length - json.length + bodyBytes;
    if (this.queued.length === 1) process.nextTick(this.flush);
  }

  private readonly flush = (): void => {
    const frames = this.queued;
    if (frames.length === 0) return;
    const bytes = this.queuedBytes;
    this.queued = [];
    this.queuedBytes = 0;
    if (frames.length === 1 || bytes > COALESCE_MAX_BYTES) {
      // Large frames are not worth copying together: one write each.
      for (const frame of frames) this.output.write(frame);
    } else {
      this.output.write(frames.join(""));
    }
  };

  /** Rejects every pending call and every later one with `error`; what was queued is written first. */
  close(error: unknown): void {
    this.flush();
    this.closedWith ??= error;
    const calls = [...this.pending.values()];
    this.pending.clear();
    for (const call of calls) {
      call.cleanup();
      call.reject(this.closedWith);
    }
    if (calls.length > 0) this.hooks.onBusy(false);
  }

  /** Removes a pending call; false when it was settled already. */
  private settle(id: number): Pending | undefined {
    const call = this.pending.get(id);
    if (!call) return undefined;
    this.pending.delete(id);
    call.cleanup();
    if (this.pending.size === 0) this.hooks.onBusy(false);
    return call;
  }

  private receive(body: string): void {
    let message: ResponseMessage;
    try {
      message = JSON.parse(body) as ResponseMessage;
    } catch {
      this.hooks.onStray(`a frame that is not JSON (${body.length} characters)`);
      return;
    }
    const call = typeof message.id === "number" ? this.settle(message.id) : undefined;
    if (!call) {
      // An answer to a call already abandoned, or an error about a frame the server could not read.
      this.hooks.onStray(message.error ? `error ${message.error.code} for id ${String(message.id)}: ${message.error.message}` : `answer for id ${String(message.id)}`);
      return;
    }
    if (message.error) {
      const { code, message: text, data } = message.error;
      call.reject(code === ErrorCodes.Cancelled ? new CancelledError(text, undefined, data) : new ThreadKeeperError(code, text, data));
    } else {
      call.resolve(call.field === undefined ? message.result : fieldOf(message.result, call.field));
    }
  }
}
