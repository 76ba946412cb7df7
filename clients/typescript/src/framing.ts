/**
 * LSP base-protocol framing (`Content-Length: N\r\n\r\n` + N bytes of UTF-8 JSON), the framing
 * this client speaks with the server. Small on purpose: a call's cost is mostly this path.
 */

const HEADER_END = Buffer.from("\r\n\r\n", "latin1");
/** What `header` holds between frames: shared, so reading a frame allocates no empty buffer. */
const NO_BYTES = Buffer.alloc(0);
const CONTENT_LENGTH = /^content-length$/i;
/** A header block longer than this is garbage (the server allows 8 KiB too). */
const MAX_HEADER_BYTES = 8 * 1024;

/** One LSP frame holding `json` (a serialized message). */
export function encodeFrame(json: string): Buffer {
  return encodeSizedFrame(json, Buffer.byteLength(json, "utf8"));
}

/**
 * The frame holding `json` as a string, for a stream that encodes it as UTF-8 while it writes
 * (a socket does, in native code): no buffer made and filled here. `bodyBytes`: `json`'s UTF-8 bytes.
 */
export function frameText(json: string, bodyBytes: number): string {
  return frameHeader(bodyBytes) + json;
}

/** The header block this client writes before a body of `bodyBytes` bytes. */
function frameHeader(bodyBytes: number): string {
  return `Content-Length: ${bodyBytes}\r\n\r\n`;
}

/** `encodeFrame` when the caller has counted `json`'s UTF-8 bytes already. */
export function encodeSizedFrame(json: string, bodyBytes: number): Buffer {
  const header = frameHeader(bodyBytes);
  const frame = Buffer.allocUnsafe(header.length + bodyBytes);
  frame.write(header, 0, "latin1");
  frame.write(json, header.length, "utf8");
  return frame;
}

/** What the server writes: the one header, in this case. */
const PLAIN_HEADER = /^Content-Length: (\d+)$/;
/** The server's header up to its number, as bytes: read in place, without a string or a regex. */
const PLAIN_PREFIX = Buffer.from("Content-Length: ", "latin1");
const CR = 13;
const LF = 10;
const DIGIT_0 = 48;
/** More digits than a frame length can have: such a header goes the general way (and is refused there). */
const MAX_PLAIN_DIGITS = 15;

/**
 * The server's own header block (`Content-Length: N\r\n\r\n`) at the start of `bytes`: where
 * its body starts, with N in `found.length`; -1 for anything else (another header, a block cut
 * by the chunking), which the general path reads. Two numbers without an array: a small answer
 * allocates only its text.
 */
function plainHeader(bytes: Buffer, found: { length: number }): number {
  const prefix = PLAIN_PREFIX.length;
  if (bytes.length < prefix + 5) return -1;
  // A loop over 16 bytes costs a sixth of `Buffer.compare`'s call into native code.
  for (let i = 0; i < prefix; i++) if (bytes[i] !== PLAIN_PREFIX[i]) return -1;
  let length = 0;
  let at = prefix;
  for (; at < bytes.length && at - prefix < MAX_PLAIN_DIGITS; at++) {
    const digit = bytes[at]! - DIGIT_0;
    if (digit < 0 || digit > 9) break;
    length = length * 10 + digit;
  }
  if (at === prefix || at + 4 > bytes.length) return -1;
  if (bytes[at] !== CR || bytes[at + 1] !== LF || bytes[at + 2] !== CR || bytes[at + 3] !== LF) return -1;
  found.length = length;
  return at + 4;
}

/** The number in a header block's Content-Length, or a reason the block is not a header. */
function contentLength(block: string): number | string {
  const plain = PLAIN_HEADER.exec(block);
  if (plain) return Number(plain[1]);
  let length: number | undefined;
  for (const line of block.split(/\r?\n/)) {
    const colon = line.indexOf(":");
    if (colon < 0) return `header line without a colon: ${JSON.stringify(line.slice(0, 80))}`;
    if (!CONTENT_LENGTH.test(line.slice(0, colon).trim())) continue;
    const value = line.slice(colon + 1).trim();
    if (!/^\d+$/.test(value)) return `bad Content-Length ${JSON.stringify(value.slice(0, 40))}`;
    length = Number(value);
  }
  return length ?? "header block without Content-Length";
}

/**
 * Cuts a byte stream into frame bodies, whatever the chunking. Bytes that are not a header
 * block are reported through `onGarbage` and skipped up to the next `Content-Length`, so one
 * bad frame never takes the next good one with it. A large body is copied once into a buffer
 * of its size as it arrives, never re-concatenated per chunk.
 */
export class FrameDecoder {
  /** Bytes of a header block not complete yet (and, transiently, what follows it). */
  private header: Buffer = NO_BYTES;
  /** The body being filled, once its header was read. */
  private body: Buffer | undefined;
  private filled = 0;
  /** The body length `plainHeader` found. */
  private readonly plain = { length: 0 };

  constructor(
    private readonly onBody: (body: string) => void,
    private readonly onGarbage: (reason: string) => void = () => {},
  ) {}

  push(chunk: Buffer): void {
    let rest = chunk;
    while (rest.length > 0) {
      if (this.body) {
        const n = Math.min(this.body.length - this.filled, rest.length);
        rest.copy(this.body, this.filled, 0, n);
        this.filled += n;
        rest = rest.subarray(n);
        if (this.filled === this.body.length) this.emitBody();
        continue;
      }
      if (this.header.length === 0) {
        // The usual case: a whole small answer with the server's header, at the chunk's start.
        const start = plainHeader(rest, this.plain);
        const end = start + this.plain.length;
        if (start >= 0 && rest.length >= end) {
          this.onBody(rest.toString("utf8", start, end));
          // The chunk's end (the usual case) needs no empty view made of it.
          if (end === rest.length) return;
          rest = rest.subarray(end);
          continue;
        }
      }
      this.header = this.header.length === 0 ? rest : Buffer.concat([this.header, rest]);
      const length = this.readHeader();
      if (length < 0) return;
      rest = this.header;
      this.header = NO_BYTES;
      if (rest.length >= length) {
        // The whole body is here (the usual case for small messages): no copy.
        this.onBody(rest.toString("utf8", 0, length));
        rest = rest.subarray(length);
      } else {
        this.body = Buffer.allocUnsafe(length);
        this.filled = 0;
      }
    }
  }

  private emitBody(): void {
    const body = this.body!;
    this.body = undefined;
    this.onBody(body.toString("utf8"));
  }

  /**
   * Reads one header block off `this.header`, leaving what follows it there; the body length,
   * or -1 when more bytes are needed.
   */
  private readHeader(): number {
    for (;;) {
      const end = this.header.indexOf(HEADER_END);
      if (end < 0) {
        if (this.header.length > MAX_HEADER_BYTES) this.skipGarbage("header block over 8 KiB");
        return -1;
      }
      const length = contentLength(this.header.toString("latin1", 0, end));
      if (typeof length === "number") {
        this.header = this.header.subarray(end + HEADER_END.length);
        return length;
      }
      this.skipGarbage(length);
    }
  }

  /** Drops bytes up to the next `Content-Length` (any case) after the first byte. */
  private skipGarbage(reason: string): void {
    this.onGarbage(reason);
    const next = this.header.toString("latin1").toLowerCase().indexOf("content-length", 1);
    // Without one, keep what could be the start of a "Content-Length" cut by the chunking.
    const keep = Math.max(1, this.header.length - "content-length".length + 1);
    this.header = this.header.subarray(next < 0 ? keep : next);
  }
}
