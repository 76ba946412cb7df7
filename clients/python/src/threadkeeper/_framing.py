"""LSP base-protocol framing: ``Content-Length: N\\r\\n\\r\\n`` followed by N bytes of UTF-8 JSON.

Pure and incremental, so it can be tested on any split of the byte stream.
"""

from __future__ import annotations

import json
import json.scanner
from collections.abc import Callable
from typing import Any, cast

HEADER_END = b"\r\n\r\n"
#: A header block longer than this is garbage, not a slow sender.
MAX_HEADER_BYTES = 8 * 1024


class FramingError(Exception):
    """The peer sent bytes that are not a valid frame."""


def frame(body: bytes) -> bytes:
    """One frame holding ``body`` as it is."""
    return b"Content-Length: %d\r\n\r\n%s" % (len(body), body)


def _compact_json_encoder() -> Callable[[Any], str]:
    """``json.dumps(value, ensure_ascii=False, separators=(",", ":"))``, made once: ``dumps`` with
    options builds an encoder (and the C encoder under it) at every call. Without a check for
    circular references: such a value fails with a RecursionError instead of a ValueError."""
    encoder = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))
    make_c_encoder = getattr(json.encoder, "c_make_encoder", None)
    if make_c_encoder is None:  # pragma: no cover - CPython has it
        return encoder.encode
    c_encoder = make_c_encoder(None, encoder.default, json.encoder.encode_basestring, None, ":", ",", False, False, True)
    plain_encode = encoder.encode

    def encode(value: Any) -> str:
        if isinstance(value, (dict, list)):
            return "".join(c_encoder(value, 0))
        return plain_encode(value)

    return encode


_to_json = _compact_json_encoder()


def encode(message: Any) -> bytes:
    """One frame holding ``message`` as compact JSON (non-ASCII sent as UTF-8, not escaped)."""
    return frame(_to_json(message).encode("utf-8"))


def message_frame(method: str, params: Any = None, request_id: int | None = None) -> bytes:
    """A request (with ``request_id``) or a notification, framed; ``params`` left out when None."""
    message: dict[str, Any] = {"jsonrpc": "2.0"}
    if request_id is not None:
        message["id"] = request_id
    message["method"] = method
    if params is not None:
        message["params"] = params
    return encode(message)


def cancel_frame(request_id: int) -> bytes:
    """``$/cancelRequest`` for ``request_id``."""
    return message_frame("$/cancelRequest", {"id": request_id})


#: The C scanner ``json.loads`` runs (typeshed types its argument oddly, hence the cast).
_scan_value: Callable[[str, int], tuple[Any, int]] = json.scanner.make_scanner(cast(Any, json.JSONDecoder()))


def decode(body: bytes) -> Any:
    """A frame body's JSON value (``ValueError`` when it is not one). The scanner reads the value
    directly, without ``json.loads``'s steps around it; anything unusual (whitespace around the
    value, garbage after it) goes to ``json.loads``, which decides."""
    text = body.decode("utf-8")
    try:
        value, end = _scan_value(text, 0)
    except StopIteration:
        end = -1
    if end != len(text):
        return json.loads(text)
    return value


def _content_length(header: bytes) -> int:
    if header.startswith(b"Content-Length: ") and header[16:].isdigit():
        return int(header[16:])  # what a server sends: the one header, spelled as here
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
        bodies: list[bytes] = []
        if self._body_length is None and not self._buffer:
            chunk = self._cut_whole_frames(chunk, bodies)
        self._buffer += chunk
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

    def _cut_whole_frames(self, chunk: bytes, bodies: list[bytes]) -> bytes:
        """The usual read, a chunk that starts with a frame: its whole frames are cut from it
        without a copy into the buffer. Returns the rest (the start of a frame)."""
        start = 0
        while True:
            end = chunk.find(HEADER_END, start)
            if end < 0:
                return chunk[start:]
            body_start = end + len(HEADER_END)
            body_end = body_start + _content_length(chunk[start:end])
            if body_end > len(chunk):
                return chunk[start:]
            bodies.append(chunk[body_start:body_end])
            start = body_end
            if start == len(chunk):
                return b""

    @property
    def pending_bytes(self) -> int:
        """Bytes received but not yet part of a complete frame."""
        return len(self._buffer)
