import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { encodeFrame, FrameDecoder } from "../src/framing.js";

/** Feeds `bytes` to a decoder in the given chunk sizes (cycled); returns bodies and garbage reports. */
function decode(bytes: Buffer, chunkSizes: number[] = [bytes.length]): { bodies: string[]; garbage: string[] } {
  const bodies: string[] = [];
  const garbage: string[] = [];
  const decoder = new FrameDecoder(
    (body) => bodies.push(body),
    (reason) => garbage.push(reason),
  );
  for (let at = 0, i = 0; at < bytes.length; i++) {
    const size = Math.max(1, chunkSizes[i % chunkSizes.length]!);
    decoder.push(bytes.subarray(at, at + size));
    at += size;
  }
  return { bodies, garbage };
}

const MESSAGES = ['{"id":1}', '{"text":"é😀<&>"}', "", '{"a":"' + "x".repeat(70_000) + '"}'];
const STREAM = Buffer.concat(MESSAGES.map(encodeFrame));

describe("framing", () => {
  test("encodeFrame counts bytes, not characters", () => {
    assert.equal(encodeFrame('"é"').toString("utf8"), 'Content-Length: 4\r\n\r\n"é"');
  });

  test("frames come out whole whatever the chunking, multi-byte characters split included", () => {
    for (const sizes of [[STREAM.length], [1], [2, 3, 5], [7], [4096], [19, 1, 65536]]) {
      assert.deepEqual(decode(STREAM, sizes), { bodies: MESSAGES, garbage: [] }, `chunks ${sizes.join(",")}`);
    }
  });

  test("other headers and any case of Content-Length are read", () => {
    const frame = Buffer.from('content-length: 2\r\nContent-Type: application/json\r\n\r\n{}', "utf8");
    assert.deepEqual(decode(frame, [3]), { bodies: ["{}"], garbage: [] });
    // The server's own header followed by another line: read the general way, whole or in pieces.
    const more = Buffer.from('Content-Length: 2\r\nContent-Type: application/json\r\n\r\n{}Content-Length: 1\r\n\r\n1', "utf8");
    for (const sizes of [[more.length], [1], [21]]) {
      assert.deepEqual(decode(more, sizes), { bodies: ["{}", "1"], garbage: [] }, `chunks ${sizes.join(",")}`);
    }
  });

  test("garbage is reported and skipped up to the next header; the next frame survives", () => {
    const cases: [string, string][] = [
      ["hello world\r\n\r\n", "header line without a colon"],
      ["X-Other: 1\r\n\r\n", "without Content-Length"],
      ["Content-Length: ten\r\n\r\n", "bad Content-Length"],
      ["junkContent-Length: 2\r\n\r\n{}", "without Content-Length"],
    ];
    for (const [junk, reason] of cases) {
      for (const sizes of [[1000], [1], [3]]) {
        const { bodies, garbage } = decode(Buffer.concat([Buffer.from(junk, "latin1"), encodeFrame('{"ok":true}')]), sizes);
        assert.ok(bodies.at(-1) === '{"ok":true}', `${JSON.stringify(junk)} in chunks of ${sizes}: ${JSON.stringify(bodies)}`);
        assert.ok(garbage.length >= 1 && garbage.some((g) => g.includes(reason)), `${JSON.stringify(junk)}: ${garbage.join("; ")}`);
      }
    }
  });

  test("a header block over 8 KiB is garbage; a later frame is still read", () => {
    const junk = Buffer.alloc(10_000, "a");
    const { bodies, garbage } = decode(Buffer.concat([junk, encodeFrame("[1]")]), [512]);
    assert.deepEqual(bodies, ["[1]"]);
    assert.ok(garbage.some((g) => g.includes("8 KiB")));
  });
});
