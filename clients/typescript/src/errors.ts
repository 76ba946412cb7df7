/** Error codes of protocol v1 (negative: sent by the server) and of this client (positive). */
export const ErrorCodes = {
  ParseError: -32700,
  InvalidRequest: -32600,
  MethodNotFound: -32601,
  InvalidParams: -32602,
  InternalError: -32603,
  NotInitialized: -32002,
  Cancelled: -32800,
  ThreadNotFound: -32001,
  VersionConflict: -32003,
  LimitExceeded: -32004,
  StoreFailed: -32005,
  ThreadExists: -32006,
  /** Client side: the server process ended (or was never started) while a call needed it. */
  ServerExited: 1,
  /** Client side: no server binary could be found. */
  BinaryNotFound: 2,
} as const;

/** An error answered by the server, or raised by this client about the server process. */
export class ThreadKeeperError extends Error {
  readonly code: number;
  readonly data: unknown;

  constructor(code: number, message: string, data?: unknown, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "ThreadKeeperError";
    this.code = code;
    this.data = data;
  }
}

/**
 * A call was cancelled: its `AbortSignal` was aborted (`reason` is the signal's reason), or the
 * server answered -32800. Named `AbortError` like the platform's own, so code that checks
 * `error.name === "AbortError"` handles it.
 */
export class CancelledError extends ThreadKeeperError {
  readonly reason: unknown;

  constructor(message: string, reason?: unknown, data?: unknown) {
    super(ErrorCodes.Cancelled, message, data, reason === undefined ? undefined : { cause: reason });
    this.name = "AbortError";
    this.reason = reason;
  }
}

/** A call took longer than its `timeoutMs`; it was cancelled (`$/cancelRequest` was sent). */
export class TimeoutError extends CancelledError {
  readonly timeoutMs: number;

  constructor(method: string, timeoutMs: number) {
    super(`${method} did not answer within ${timeoutMs} ms; it was cancelled`);
    this.name = "TimeoutError";
    this.timeoutMs = timeoutMs;
  }
}

/** The server process ended: every pending and later call fails with this. */
export class ServerExitedError extends ThreadKeeperError {
  readonly exitCode: number | null;
  readonly signal: string | null;
  /** The last part of what the server wrote to stderr. */
  readonly stderr: string;

  constructor(message: string, exitCode: number | null, signal: string | null, stderr: string, cause?: unknown) {
    super(ErrorCodes.ServerExited, message, { exitCode, signal, stderr }, { cause });
    this.name = "ServerExitedError";
    this.exitCode = exitCode;
    this.signal = signal;
    this.stderr = stderr;
  }
}

export class BinaryNotFoundError extends ThreadKeeperError {
  constructor(message: string, searched: string[]) {
    super(ErrorCodes.BinaryNotFound, message, { searched });
    this.name = "BinaryNotFoundError";
  }
}
