"""Content parts: helpers that build media parts from bytes or a file, and the encoding ``append``
applies before sending (bytes become base64; the server stores them as a blob)."""

from __future__ import annotations

import base64
import mimetypes
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TypeVar

from .types import AudioDataPart, BinaryData, ContentPart, ContentPartInput, FileDataPart, ImageDataPart, ImageDetail, TextPart

E = TypeVar("E")


def text_part(text: str) -> TextPart:
    """A text part."""
    return {"type": "text", "text": text}


def image_part(data: BinaryData, *, media_type: str | None = None, detail: ImageDetail | None = None) -> ImageDataPart:
    """An image part from its bytes (``bytes``, ``bytearray``, ``memoryview``, or a ``Path`` to read;
    a ``str`` is taken as base64 or a ``data:`` URL). Without ``media_type`` the server reads it
    from the bytes (PNG, JPEG, GIF, WebP, ...)."""
    part: ImageDataPart = {"type": "image", "data": data}
    if media_type is not None:
        part["mediaType"] = media_type
    if detail is not None:
        part["detail"] = detail
    return part


def file_part(data: BinaryData, *, media_type: str | None = None, filename: str | None = None) -> FileDataPart:
    """A file part from its bytes. From a ``Path``, ``filename`` defaults to the file's name and
    ``media_type`` to the type its name suggests; otherwise give ``media_type`` unless the server
    can tell it from the bytes (PDF, images, audio)."""
    if isinstance(data, Path):
        filename = data.name if filename is None else filename
        media_type = mimetypes.guess_type(data.name)[0] if media_type is None else media_type
    part: FileDataPart = {"type": "file", "data": data}
    if media_type is not None:
        part["mediaType"] = media_type
    if filename is not None:
        part["filename"] = filename
    return part


def audio_part(data: BinaryData, *, media_type: str | None = None) -> AudioDataPart:
    """An audio part from its bytes; without ``media_type`` the server reads it from them (WAV, MP3, Ogg, FLAC, ...)."""
    part: AudioDataPart = {"type": "audio", "data": data}
    if media_type is not None:
        part["mediaType"] = media_type
    return part


def text_of(content: str | Sequence[ContentPart] | Sequence[ContentPartInput]) -> str:
    """The text of content: the string itself, or its text parts joined by newlines (media parts
    left out), as text renders show a tool result's parts."""
    if isinstance(content, str):
        return content
    return "\n".join(part["text"] for part in content if part["type"] == "text")


def to_base64(data: BinaryData) -> str:
    """Bytes (or a file's) as base64; a ``str`` is passed through: it is base64 or a ``data:`` URL already."""
    if isinstance(data, str):
        return data
    if isinstance(data, Path):
        data = data.read_bytes()
    return base64.b64encode(data).decode("ascii")


def _has_bytes(part: Any) -> bool:
    return isinstance(part, dict) and isinstance(part.get("data"), (bytes, bytearray, memoryview, Path))


def encode_events(events: Sequence[E]) -> list[E]:
    """The events as sent: every part whose ``data`` is bytes (or a ``Path``) gets them base64-encoded.

    The caller's events and parts are never changed; events without such parts are passed as they are.
    """
    encoded: list[Any] = list(events)
    for i, event in enumerate(encoded):
        content = event.get("content") if isinstance(event, dict) else None
        if isinstance(content, list) and any(_has_bytes(part) for part in content):
            parts = [{**part, "data": to_base64(part["data"])} if _has_bytes(part) else part for part in content]
            encoded[i] = {**event, "content": parts}
    return encoded
