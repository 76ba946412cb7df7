"""LSP base-protocol framing: ``Content-Length: N\\r\\n\\r\\n`` followed by N bytes of UTF-8 JSON.

Pure and incremental, so it can be tested on any split of the byte stream.
"""

from __future__ import annotations

import json
from typing import Any

HEADER_END = b"\r\n\r\n"
#: A header block longer than this is garbage, not a slow sender.
MAX_HEADER_BYTES = 8 * 1024


class FramingError(Exception):
    """The peer sent bytes that are not a valid frame."""


def frame(body: bytes) -> bytes:
    """One frame holding ``body`` as it is."""
    return b"Content-Length: %d\r\n\r\n%s" % (len(body), body)


def encode(message: Any) -> bytes:
    """One frame holding ``message`` as compact JSON (non-ASCII sent as UTF-8, not escaped)."""
    return frame(json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode("utf-8"))


def _content_length(header: bytes) -> int:
    length: int | None = None
    for line in header.split(b"\r\n"):
        name, sep, value = line.partition(b":")
        if not sep:
            raise FramingError(f"malformed header line {line[:80]!r}")
        # Header names are case-insensitive; other headers (Content-Type) are ignored.
        if name.strip().lower() == b"content-length":
            try:
                length = int(value.strip())
            except ValueError:
                raise FramingError(f"bad Content-Length {value.strip()[:40]!r}") from None
            if length < 0:
                raise FramingError(f"bad Content-Length {length}")
    if length is None:
        raise FramingError("header block has no Content-Length")
    return length


class FrameDecoder:
    """Cuts a byte stream into frame bodies. Feed it chunks as they arrive."""

    def __init__(self) -> None:
        self._buffer = bytearray()
        self._body_length: int | None = None

    def feed(self, chunk: bytes) -> list[bytes]:
        """Adds ``chunk``; returns the bodies of every frame it completed, in order."""
        self._buffer += chunk
        bodies: list[bytes] = []
        while True:
            if self._body_length is None:
                end = self._buffer.find(HEADER_END)
                if end < 0:
                    if len(self._buffer) > MAX_HEADER_BYTES:
                        raise FramingError("no end of headers within %d bytes" % MAX_HEADER_BYTES)
                    return bodies
                self._body_length = _content_length(bytes(self._buffer[:end]))
                del self._buffer[: end + len(HEADER_END)]
            if len(self._buffer) < self._body_length:
                return bodies
            bodies.append(bytes(self._buffer[: self._body_length]))
            del self._buffer[: self._body_length]
            self._body_length = None

    @property
    def pending_bytes(self) -> int:
        """Bytes received but not yet part of a complete frame."""
        return len(self._buffer)
