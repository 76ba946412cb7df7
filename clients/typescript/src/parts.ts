/**
 * Content parts: helpers that build media parts from bytes, and the encoding `append` applies
 * before sending (bytes become base64; the server stores them as a blob).
 */
import type {
  AgentEventInput,
  AudioDataPart,
  BinaryData,
  ContentPartInput,
  FileDataPart,
  ImageDataPart,
  ImageDetail,
  TextPart,
} from "./types.js";

/** A text part. */
export function textPart(text: string): TextPart {
  return { type: "text", text };
}

/**
 * An image part from its bytes (a `Uint8Array` or `Buffer`; a string is taken as base64 or a
 * `data:` URL). Without `mediaType` the server reads it from the bytes (PNG, JPEG, GIF, WebP…).
 */
export function imagePart(data: BinaryData, options: { mediaType?: string; detail?: ImageDetail } = {}): ImageDataPart {
  return { type: "image", data, ...defined(options) };
}

/** A file part from its bytes; give `mediaType` unless the server can tell it from the bytes (PDF, images, audio). */
export function filePart(data: BinaryData, options: { mediaType?: string; filename?: string } = {}): FileDataPart {
  return { type: "file", data, ...defined(options) };
}

/** An audio part from its bytes; without `mediaType` the server reads it from the bytes (WAV, MP3, Ogg, FLAC…). */
export function audioPart(data: BinaryData, options: { mediaType?: string } = {}): AudioDataPart {
  return { type: "audio", data, ...defined(options) };
}

/**
 * The text of content: the string itself, or the text parts joined by newlines (media parts
 * left out) — what text renders show of a tool result's parts.
 */
export function textOf(content: string | readonly ContentPartInput[]): string {
  if (typeof content === "string") return content;
  return content
    .filter((part): part is TextPart => part.type === "text")
    .map((part) => part.text)
    .join("\n");
}

/** Bytes as base64 (a string is passed through: it is base64 or a `data:` URL already). */
export function toBase64(data: BinaryData): string {
  if (typeof data === "string") return data;
  return Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString("base64");
}

/** Base64 from the server as bytes: a `Uint8Array` (not a `Buffer`). */
export function fromBase64(text: string): Uint8Array {
  const buffer = Buffer.from(text, "base64");
  return new Uint8Array(buffer.buffer, buffer.byteOffset, buffer.byteLength);
}

/**
 * The events as sent: every part whose `data` is bytes gets them base64-encoded. Events without
 * such parts are passed as they are (no copy); the caller's objects are never changed.
 */
export function encodeEvents<E extends AgentEventInput>(events: readonly E[]): readonly E[] {
  let encoded: E[] | undefined;
  for (let i = 0; i < events.length; i++) {
    const event = events[i]!;
    const content = (event as { content?: unknown }).content;
    if (!Array.isArray(content) || !content.some(hasBytes)) continue;
    encoded ??= events.slice();
    encoded[i] = { ...event, content: content.map((part: ContentPartInput) => (hasBytes(part) ? { ...part, data: toBase64(part.data) } : part)) };
  }
  return encoded ?? events;
}

function hasBytes(part: unknown): part is { data: Uint8Array } {
  return typeof part === "object" && part !== null && (part as { data?: unknown }).data instanceof Uint8Array;
}

function defined<T extends object>(options: T): T {
  return Object.fromEntries(Object.entries(options).filter(([, value]) => value !== undefined)) as T;
}
