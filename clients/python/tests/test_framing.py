"""The hand-written framing, on every way the byte stream can be cut."""

from __future__ import annotations

import json
import random

import pytest

from threadkeeper._framing import MAX_HEADER_BYTES, FrameDecoder, FramingError, encode


def frame(body: bytes, headers: str = "Content-Length: {n}\r\n") -> bytes:
    return (headers.format(n=len(body)) + "\r\n").encode("ascii") + body


def test_encode_counts_bytes_not_characters() -> None:
    data = encode({"text": "é😀", "n": 1})
    body = '{"text":"é😀","n":1}'.encode()
    assert data == b"Content-Length: %d\r\n\r\n" % len(body) + body
    assert len(body) == len('{"text":"","n":1}') + 2 + 4  # é is 2 bytes, 😀 is 4
    assert FrameDecoder().feed(data) == [body]


def test_one_byte_at_a_time() -> None:
    bodies = [b'{"a":1}', "{\"b\":\"\u00e9\"}".encode(), b"[]"]
    stream = b"".join(frame(b) for b in bodies)
    decoder = FrameDecoder()
    out: list[bytes] = []
    for i in range(len(stream)):
        out += decoder.feed(stream[i : i + 1])
    assert out == bodies
    assert decoder.pending_bytes == 0


def test_random_splits_of_many_frames() -> None:
    rng = random.Random(7)
    bodies = [json.dumps({"i": i, "pad": "x" * rng.randrange(0, 3000)}).encode() for i in range(200)]
    stream = b"".join(frame(b) for b in bodies)
    for _ in range(20):
        decoder = FrameDecoder()
        out: list[bytes] = []
        pos = 0
        while pos < len(stream):
            step = rng.randrange(1, 5000)
            out += decoder.feed(stream[pos : pos + step])
            pos += step
        assert out == bodies


def test_many_frames_in_one_chunk_and_a_partial_tail() -> None:
    stream = frame(b"1") + frame(b"22") + frame(b"333")
    decoder = FrameDecoder()
    assert decoder.feed(stream + b"Content-Len") == [b"1", b"22", b"333"]
    assert decoder.feed(b"gth: 2\r\n\r\n4") == []
    assert decoder.feed(b"4") == [b"44"]


def test_large_frame() -> None:
    body = json.dumps({"text": "é<&>" * 2_500_000}).encode()  # 15 MB
    stream = frame(body)
    decoder = FrameDecoder()
    out: list[bytes] = []
    for pos in range(0, len(stream), 65536):
        out += decoder.feed(stream[pos : pos + 65536])
    assert len(out) == 1 and out[0] == body


def test_header_names_are_case_insensitive_and_other_headers_ignored() -> None:
    body = b'{"ok":true}'
    stream = frame(body, "content-length: {n}\r\nContent-Type: application/vscode-jsonrpc; charset=utf-8\r\n")
    stream += frame(body, "Content-Type: x\r\nCONTENT-LENGTH:{n}\r\n")
    assert FrameDecoder().feed(stream) == [body, body]


def test_empty_body() -> None:
    assert FrameDecoder().feed(b"Content-Length: 0\r\n\r\n") == [b""]


@pytest.mark.parametrize(
    "header, message",
    [
        (b"Content-Type: x\r\n\r\n", "no Content-Length"),
        (b"Content-Length: ten\r\n\r\n", "bad Content-Length"),
        (b"Content-Length: -1\r\n\r\n", "bad Content-Length"),
        (b"garbage line\r\n\r\n", "malformed header"),
    ],
)
def test_bad_headers_raise(header: bytes, message: str) -> None:
    with pytest.raises(FramingError, match=message):
        FrameDecoder().feed(header)


def test_endless_header_raises() -> None:
    with pytest.raises(FramingError, match="no end of headers"):
        FrameDecoder().feed(b"X" * (MAX_HEADER_BYTES + 1))
