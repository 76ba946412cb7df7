/** Content parts and blobs against the real server: bytes in, blob ids out, the bytes back whole. */
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { deflateSync } from "node:zlib";
import { after, before, describe, test } from "node:test";
import {
  ErrorCodes,
  filePart,
  imagePart,
  textOf,
  textPart,
  type ContentPart,
  type MessageEventInput,
  type ThreadKeeper,
} from "../src/index.js";
import { rejectsWithCode, spawnMemory } from "./helpers.js";

/** Every test here talks to a local server: a few seconds each is plenty. */
const TIME_LIMIT = { timeout: 30_000 };
const CALL = { timeoutMs: 10_000 };

function crc32(bytes: Uint8Array): number {
  let crc = 0xffffffff;
  for (const byte of bytes) {
    crc ^= byte;
    for (let k = 0; k < 8; k++) crc = crc & 1 ? (crc >>> 1) ^ 0xedb88320 : crc >>> 1;
  }
  return (crc ^ 0xffffffff) >>> 0;
}

function chunk(type: string, data: Uint8Array): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(data.length, 0);
  head.write(type, 4, "latin1");
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(Buffer.concat([head.subarray(4), data])), 0);
  return Buffer.concat([head, data, crc]);
}

/** A valid `width`×`height` 8-bit RGB PNG, every pixel a shade of `seed`. */
function png(width: number, height: number, seed = 0): Uint8Array {
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header.set([8, 2, 0, 0, 0], 8); // bit depth 8, colour type RGB, deflate, no filter, no interlace
  const rows = Buffer.alloc(height * (1 + 3 * width));
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < 3 * width; x++) rows[y * (1 + 3 * width) + 1 + x] = (seed + x + y) & 0xff;
  }
  const file = Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk("IHDR", header),
    chunk("IDAT", deflateSync(rows)),
    chunk("IEND", new Uint8Array()),
  ]);
  return new Uint8Array(file.buffer, file.byteOffset, file.byteLength);
}

function blobIdOf(bytes: Uint8Array): string {
  return `sha256:${createHash("sha256").update(bytes).digest("hex")}`;
}

const PDF = Buffer.from("%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n");

let tk: ThreadKeeper;
before(async () => {
  tk = await spawnMemory();
});
after(async () => {
  await tk.close();
});

describe("content parts", TIME_LIMIT, () => {
  test("an image appended as bytes is read back as a blob part with its size and dimensions, never its bytes", async () => {
    const image = png(3, 2);
    const thread = await tk.openThread(CALL);
    const event: MessageEventInput = { type: "message", role: "user", iteration: 0, content: [textPart("What is this?"), imagePart(image, { detail: "low" })] };
    await thread.append([event], CALL);
    assert.ok(Array.isArray(event.content) && event.content[1]?.type === "image" && event.content[1].data === image, "the caller's part is not changed");

    const [read] = await thread.events(CALL);
    assert.ok(read?.type === "message" && Array.isArray(read.content));
    const [text, part] = read.content;
    assert.deepEqual(text, { type: "text", text: "What is this?" });
    assert.ok(part?.type === "image" && part.blob !== undefined);
    assert.equal(part.blob, blobIdOf(image));
    assert.match(part.blob, /^sha256:[0-9a-f]{64}$/);
    assert.deepEqual(
      { mediaType: part.mediaType, detail: part.detail, size: part.size, width: part.width, height: part.height },
      { mediaType: "image/png", detail: "low", size: image.byteLength, width: 3, height: 2 },
    );
    assert.equal("data" in part, false);
    assert.equal(textOf(read.content), "What is this?");

    const got = await tk.getBlob(part.blob, CALL);
    assert.deepEqual(got.data, image, "the blob's bytes are the bytes appended");
    assert.equal(Buffer.isBuffer(got.data), false);
    assert.deepEqual({ ...got, data: undefined }, { blob: part.blob, mediaType: "image/png", size: image.byteLength, width: 3, height: 2, data: undefined });
    assert.deepEqual(await tk.statBlob(part.blob, CALL), { blob: part.blob, mediaType: "image/png", size: image.byteLength, width: 3, height: 2 });
  });

  test("a Buffer works as bytes; a tool result may give content parts and no result", async () => {
    const image = Buffer.from(png(5, 4, 7));
    const thread = await tk.openThread(CALL);
    await thread.append(
      [
        { type: "tool_call", toolName: "screenshot", toolCallId: "c1", args: {}, iteration: 0 },
        { type: "tool_result", toolCallId: "c1", iteration: 0, content: [textPart("the screen"), imagePart(image), filePart(PDF, { filename: "a.pdf" })] },
      ],
      CALL,
    );
    const result = (await thread.events(CALL))[1];
    assert.ok(result?.type === "tool_result" && result.content !== undefined);
    assert.equal("result" in result, false);
    const [, shot, pdf] = result.content as ContentPart[];
    assert.ok(shot?.type === "image" && shot.blob !== undefined);
    assert.deepEqual([shot.blob, shot.mediaType, shot.width, shot.height], [blobIdOf(image), "image/png", 5, 4]);
    assert.ok(pdf?.type === "file" && pdf.blob !== undefined);
    assert.deepEqual([pdf.blob, pdf.mediaType, pdf.filename, pdf.size], [blobIdOf(PDF), "application/pdf", "a.pdf", PDF.byteLength]);
    assert.deepEqual((await tk.getBlob(pdf.blob, CALL)).data, new Uint8Array(PDF));
  });

  test("media.keepImages sends the bytes of the newest images only, the older ones as their placeholder", async () => {
    const thread = await tk.openThread(CALL);
    const shots = [0, 1, 2, 3, 4].map((seed) => png(4, 3, 100 + seed));
    await thread.append(
      shots.flatMap((shot, i) => [
        { type: "tool_call" as const, toolName: "screenshot", toolCallId: `s${i}`, args: {}, iteration: i },
        { type: "tool_result" as const, toolCallId: `s${i}`, iteration: i, content: [imagePart(shot)] },
      ]),
      CALL,
    );
    const carried = (request: unknown) => JSON.stringify(request).match(/"type":"image"/g)?.length ?? 0;
    const all = await thread.renderAnthropic({ ...CALL });
    assert.equal(carried(all), 5, "every image with its bytes by default");
    // Two kept: the frontier stays at 0 up to 4 images, then moves in steps of 3: of 5 images,
    // the first 3 become placeholders and the newest 2 keep their bytes.
    const kept = await thread.renderAnthropic({ ...CALL, media: { keepImages: 2 }, mediaTokens: "anthropic" });
    assert.equal(carried(kept), 2);
    const text = JSON.stringify(kept);
    for (const old of shots.slice(0, 3)) assert.ok(text.includes(blobIdOf(old)), "an older image is named by its placeholder");
    await rejectsWithCode(thread.renderAnthropic({ ...CALL, media: { keepImages: 0 } }), -32602);
  });

  test("a blob put first is named by a part, which gets what the store knows of it", async () => {
    const image = png(6, 1, 3);
    const put = await tk.putBlob(image, CALL);
    const thread = await tk.openThread(CALL);
    await thread.append([{ type: "message", role: "user", iteration: 0, content: [{ type: "image", blob: put.blob, mediaType: "image/png" }] }], CALL);
    const [read] = await thread.events(CALL);
    assert.ok(read?.type === "message" && Array.isArray(read.content));
    assert.deepEqual(read.content[0], { type: "image", blob: put.blob, mediaType: "image/png", size: image.byteLength, width: 6, height: 1 });
  });

  test("a step appends parts given as bytes too", async () => {
    const image = png(2, 2, 9);
    const thread = await tk.openThread(CALL);
    const { xml } = await thread.step([{ type: "message", role: "user", iteration: 0, content: [imagePart(image)] }], CALL);
    assert.ok(xml.includes(blobIdOf(image)), xml);
  });
});

describe("blobs", TIME_LIMIT, () => {
  test("the same bytes put twice are one blob, named by their SHA-256; base64 text names the same blob", async () => {
    const image = png(4, 4, 1);
    const first = await tk.putBlob(image, CALL);
    const second = await tk.putBlob(Buffer.from(image), { mediaType: "image/png", ...CALL });
    const fromText = await tk.putBlob(Buffer.from(image).toString("base64"), CALL);
    const fromDataUrl = await tk.putBlob(`data:image/png;base64,${Buffer.from(image).toString("base64")}`, CALL);
    assert.deepEqual(first, { blob: blobIdOf(image), mediaType: "image/png", size: image.byteLength, width: 4, height: 4 });
    assert.deepEqual([second, fromText, fromDataUrl], [first, first, first]);
    assert.deepEqual(await tk.statBlob(first.blob, CALL), first);
    const got = await tk.getBlob(first.blob, CALL);
    assert.deepEqual(got.data, image);
  });

  test("bytes of a type no signature tells keep the declared media type", async () => {
    const text = new TextEncoder().encode("hello, blob");
    const info = await tk.putBlob(text, { mediaType: "text/plain", ...CALL });
    assert.deepEqual(info, { blob: blobIdOf(text), mediaType: "text/plain", size: text.byteLength });
    assert.equal(new TextDecoder().decode((await tk.getBlob(info.blob, CALL)).data), "hello, blob");
  });
});

describe("hostile inputs", TIME_LIMIT, () => {
  const pathOf = (error: { data?: unknown }) => (error.data as { path?: string }).path;

  test("bad base64 sent as it is: -32602 naming the field", async () => {
    const put = await rejectsWithCode(tk.putBlob("this is %%% not base64", CALL), ErrorCodes.InvalidParams);
    assert.equal(pathOf(put), "data");
    const thread = await tk.openThread(CALL);
    const append = await rejectsWithCode(
      thread.append([{ type: "message", role: "user", iteration: 0, content: [textPart("x"), { type: "image", data: "%%%" }] }], CALL),
      ErrorCodes.InvalidParams,
    );
    assert.equal(pathOf(append), "events[0].content[1].data");
    assert.equal((await thread.events(CALL)).length, 0, "nothing was appended");
    const empty = await rejectsWithCode(tk.putBlob(new Uint8Array(), CALL), ErrorCodes.InvalidParams);
    assert.equal(pathOf(empty), "data");
  });

  test("a media type the bytes contradict: -32602", async () => {
    const put = await rejectsWithCode(tk.putBlob(PDF, { mediaType: "image/png", ...CALL }), ErrorCodes.InvalidParams);
    assert.equal(pathOf(put), "mediaType");
    const thread = await tk.openThread(CALL);
    const append = await rejectsWithCode(
      thread.append([{ type: "message", role: "user", iteration: 0, content: [imagePart(PDF, { mediaType: "image/png" })] }], CALL),
      ErrorCodes.InvalidParams,
    );
    assert.equal(pathOf(append), "events[0].content[0].mediaType");
  });

  test("a blob the store does not hold: -32602 from get, stat and an append naming it", async () => {
    const absent = blobIdOf(new TextEncoder().encode("never put"));
    assert.equal(pathOf(await rejectsWithCode(tk.getBlob(absent, CALL), ErrorCodes.InvalidParams)), "blob");
    assert.equal(pathOf(await rejectsWithCode(tk.statBlob(absent, CALL), ErrorCodes.InvalidParams)), "blob");
    assert.equal(pathOf(await rejectsWithCode(tk.statBlob("sha256:ABC", CALL), ErrorCodes.InvalidParams)), "blob");
    const thread = await tk.openThread(CALL);
    const append = await rejectsWithCode(
      thread.append([{ type: "message", role: "user", iteration: 0, content: [{ type: "image", blob: absent as `sha256:${string}`, mediaType: "image/png" }] }], CALL),
      ErrorCodes.InvalidParams,
    );
    assert.equal(pathOf(append), "events[0].content[0].blob");
  });

  test("bytes over maxBlobBytes: -32004 with the limit, the size and the maximum", async () => {
    const small = await spawnMemory(["--max-blob-bytes", "1000"]);
    try {
      assert.equal((small.server.capabilities.limits as { maxBlobBytes?: number }).maxBlobBytes, 1000);
      const big = new Uint8Array(2000).fill(7);
      const put = await rejectsWithCode(small.putBlob(big, { mediaType: "application/octet-stream", ...CALL }), ErrorCodes.LimitExceeded);
      assert.deepEqual(put.data, { limit: "maxBlobBytes", value: 2000, max: 1000 });
      const thread = await small.openThread(CALL);
      const append = await rejectsWithCode(
        thread.append([{ type: "message", role: "user", iteration: 0, content: [filePart(big, { mediaType: "application/octet-stream" })] }], CALL),
        ErrorCodes.LimitExceeded,
      );
      assert.deepEqual(append.data, { limit: "maxBlobBytes", value: 2000, max: 1000 });
      // Just under the limit is kept.
      assert.equal((await small.putBlob(png(1, 1), CALL)).width, 1);
    } finally {
      await small.close();
    }
  });

  test("an image header claiming more than 65535 px a side: -32602", async () => {
    const error = await rejectsWithCode(tk.putBlob(png(70_000, 1), CALL), ErrorCodes.InvalidParams);
    assert.equal(pathOf(error), "data");
  });
});
