"""Content parts and blobs against the real server: bytes (or a file) in, blob ids out, the bytes back whole.

Every client here is spawned with a call timeout, so no test waits on the server for long.
"""

from __future__ import annotations

import base64
import hashlib
import json
import struct
import zlib
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import BINARY, MEMORY_ARGS

from threadkeeper import (
    AsyncThread,
    AsyncThreadKeeper,
    BlobContent,
    BlobInfo,
    ErrorCode,
    ThreadKeeper,
    ThreadKeeperError,
    audio_part,
    file_part,
    image_part,
    text_of,
    text_part,
)

#: Seconds any one call may take.
CALL_TIMEOUT = 10.0

PDF = b"%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n"


def png(width: int, height: int, seed: int = 0) -> bytes:
    """A valid ``width`` x ``height`` 8-bit RGB PNG."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    rows = b"".join(b"\x00" + bytes((seed + x + y) & 0xFF for x in range(3 * width)) for y in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")


def blob_id(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


async def spawn(*extra: str) -> AsyncThreadKeeper:
    return await AsyncThreadKeeper.spawn(binary=BINARY, args=[*MEMORY_ARGS, *extra], timeout=CALL_TIMEOUT, start_timeout=CALL_TIMEOUT)


@pytest.fixture
async def tk() -> AsyncIterator[AsyncThreadKeeper]:
    client = await spawn()
    try:
        yield client
    finally:
        await client.close()


@pytest.fixture
def blocking() -> Iterator[ThreadKeeper]:
    with ThreadKeeper.spawn(binary=BINARY, args=MEMORY_ARGS, timeout=CALL_TIMEOUT, start_timeout=CALL_TIMEOUT) as client:
        yield client


def path_of(error: ThreadKeeperError) -> Any:
    assert isinstance(error.data, dict), error
    return error.data.get("path")


async def test_image_from_bytes_reads_back_as_a_blob_part(tk: AsyncThreadKeeper) -> None:
    image = png(3, 2)
    thread = await tk.open_thread()
    parts = [text_part("What is this?"), image_part(image, detail="low")]
    await thread.append([{"type": "message", "role": "user", "iteration": 0, "content": parts}])
    assert parts[1] == {"type": "image", "data": image, "detail": "low"}, "the caller's part is not changed"

    [read] = await thread.events()
    assert read["type"] == "message" and not isinstance(read["content"], str)
    text, part = read["content"]
    assert text == {"type": "text", "text": "What is this?"}
    assert part == {"type": "image", "blob": blob_id(image), "detail": "low", "mediaType": "image/png", "size": len(image), "width": 3, "height": 2}
    assert "data" not in part
    assert text_of(read["content"]) == "What is this?"

    got = await tk.get_blob(blob_id(image))
    assert got == BlobContent(blob_id(image), "image/png", len(image), image, 3, 2)
    assert type(got.data) is bytes and got.data == image
    assert await tk.stat_blob(blob_id(image)) == BlobInfo(blob_id(image), "image/png", len(image), 3, 2)


async def test_media_keep_images_sends_only_the_newest_images_with_their_bytes(tk: AsyncThreadKeeper) -> None:
    thread = await tk.open_thread()
    shots = [png(4, 3, 100 + seed) for seed in range(5)]
    events: list[Any] = []
    for i, shot in enumerate(shots):
        events.append({"type": "tool_call", "toolName": "screenshot", "toolCallId": f"s{i}", "args": {}, "iteration": i})
        events.append({"type": "tool_result", "toolCallId": f"s{i}", "iteration": i, "content": [image_part(shot)]})
    await thread.append(events)

    def carried(result: dict[str, Any]) -> int:
        return json.dumps(result, separators=(",", ":")).count('"type":"image"')

    assert carried(await thread.render("anthropic")) == 5, "every image with its bytes by default"
    # Two kept: of 5 images the frontier has moved once (steps of 3), so the newest 2 carry bytes.
    kept = await thread.render("anthropic", media={"keepImages": 2}, media_tokens="anthropic")
    assert carried(kept) == 2
    for old in shots[:3]:
        assert blob_id(old) in json.dumps(kept), "an older image is named by its placeholder"
    with pytest.raises(ThreadKeeperError) as refused:
        await thread.render("anthropic", media={"keepImages": 0})
    assert refused.value.code == ErrorCode.INVALID_PARAMS


async def screenshots_thread(tk: AsyncThreadKeeper, count: int = 5) -> tuple[AsyncThread, list[bytes]]:
    """A thread of ``count`` screenshot tool calls, each answered by one PNG."""
    thread = await tk.open_thread()
    shots = [png(4, 3, 100 + seed) for seed in range(count)]
    events: list[Any] = []
    for i, shot in enumerate(shots):
        events.append({"type": "tool_call", "toolName": "screenshot", "toolCallId": f"s{i}", "args": {}, "iteration": i})
        events.append({"type": "tool_result", "toolCallId": f"s{i}", "iteration": i, "content": [image_part(shot)]})
    await thread.append(events)
    return thread, shots


def with_bytes(request: Any, shots: list[bytes]) -> list[bool]:
    """Per screenshot, whether the request carries its bytes (base64 in every format's wire form)."""
    text = json.dumps(request)
    return [base64.b64encode(shot).decode() in text for shot in shots]


def request_of(result: dict[str, Any], *keys: str) -> dict[str, Any]:
    """The request body a format-specific render answers: those keys of the full render result."""
    return {key: result[key] for key in keys if key in result}


#: Of 5 images with keepImages 2 the frontier has moved once (steps of 3): the newest 2 carry bytes.
NEWEST_TWO = [False, False, False, True, True]
KEEP_TWO: Any = {"keepImages": 2}

#: Each format-specific render, the format it asks for and the keys of the result it answers.
FORMAT_RENDERS: list[tuple[str, str, tuple[str, ...]]] = [
    ("render_anthropic", "anthropic", ("system", "messages")),
    ("render_openai_chat", "openai-chat", ("messages",)),
    ("render_openai_responses", "openai-responses", ("instructions", "input")),
    ("render_gemini", "gemini", ("contents", "systemInstruction")),
    ("render_bedrock_converse", "bedrock-converse", ("messages", "system")),
]


@pytest.mark.parametrize(("method", "format", "keys"), FORMAT_RENDERS, ids=[format for _, format, _ in FORMAT_RENDERS])
async def test_format_renders_take_media_as_render_does(tk: AsyncThreadKeeper, method: str, format: Any, keys: tuple[str, ...]) -> None:
    thread, shots = await screenshots_thread(tk)
    render = getattr(thread, method)
    assert with_bytes(await render(), shots) == [True] * 5, "every image with its bytes by default"
    rule = "gemini" if format == "gemini" else "anthropic"
    kept = await render(media=KEEP_TWO, media_tokens=rule)
    assert with_bytes(kept, shots) == NEWEST_TWO
    assert kept == request_of(await thread.render(format, media=KEEP_TWO, media_tokens=rule), *keys)
    for old in shots[:3]:
        assert blob_id(old) in json.dumps(kept), "an older image is named by its placeholder"
    # Both options reach the server: a bad value of either is refused where it is.
    with pytest.raises(ThreadKeeperError) as media:
        await render(media={"keepImages": 0})
    assert (media.value.code, path_of(media.value)) == (ErrorCode.INVALID_PARAMS, "options.media.keepImages")
    with pytest.raises(ThreadKeeperError) as rule_refused:
        await render(media_tokens="tiles")
    assert (rule_refused.value.code, path_of(rule_refused.value)) == (ErrorCode.INVALID_PARAMS, "options.mediaTokens")


async def test_messages_text_and_xml_renders_take_media(tk: AsyncThreadKeeper) -> None:
    thread, shots = await screenshots_thread(tk)
    messages = await thread.render_messages(media=KEEP_TWO, media_tokens="anthropic")
    assert with_bytes(messages, shots) == NEWEST_TWO
    assert messages == (await thread.render("messages", media=KEEP_TWO, media_tokens="anthropic"))["messages"]
    # XML mode: the document names every image; the blobs after it are cut by the same rule.
    in_xml = await thread.render_messages(context_mode="xml", media=KEEP_TWO)
    assert with_bytes(in_xml, shots) == NEWEST_TWO
    # text and xml name every part by its placeholder: the options are accepted and change nothing.
    assert await thread.render_text(media=KEEP_TWO, media_tokens="gemini") == await thread.render_text()
    assert await thread.render_xml(media=KEEP_TWO, media_tokens="gemini") == await thread.render_xml()
    assert await thread.render_xml(media=KEEP_TWO, incremental=True) == await thread.render_xml()
    delta = await thread.render_xml_delta(4, media=KEEP_TWO)
    assert delta == await thread.render_xml_delta(4)
    with pytest.raises(ThreadKeeperError) as refused:
        await thread.render_text(media={"keepImages": 10_001})
    assert (refused.value.code, path_of(refused.value)) == (ErrorCode.INVALID_PARAMS, "options.media.keepImages")


async def test_parts_from_a_path_a_bytearray_and_a_memoryview(tk: AsyncThreadKeeper, tmp_path: Path) -> None:
    shot, report = tmp_path / "shot.png", tmp_path / "report.pdf"
    shot.write_bytes(png(5, 4, 7))
    report.write_bytes(PDF)
    other = png(2, 2, 9)
    thread = await tk.open_thread()
    await thread.append(
        [
            {"type": "tool_call", "toolName": "screenshot", "toolCallId": "c1", "args": {}, "iteration": 0},
            {"type": "tool_result", "toolCallId": "c1", "iteration": 0, "content": [text_part("the screen"), image_part(shot), file_part(report)]},
            {"type": "message", "role": "user", "iteration": 0, "content": [image_part(bytearray(other)), {"type": "image", "data": memoryview(other)}]},
        ]
    )
    _, result, message = await thread.events()
    assert result["type"] == "tool_result" and "result" not in result
    assert result["content"] == [
        {"type": "text", "text": "the screen"},
        {"type": "image", "blob": blob_id(shot.read_bytes()), "mediaType": "image/png", "size": shot.stat().st_size, "width": 5, "height": 4},
        {"type": "file", "blob": blob_id(PDF), "mediaType": "application/pdf", "filename": "report.pdf", "size": len(PDF)},
    ]
    assert message["type"] == "message" and not isinstance(message["content"], str)
    assert [part.get("blob") for part in message["content"]] == [blob_id(other)] * 2
    assert (await tk.get_blob(blob_id(PDF))).data == PDF
    assert (await tk.get_blob(blob_id(shot.read_bytes()))).data == shot.read_bytes()


async def test_a_blob_put_first_is_named_by_a_part(tk: AsyncThreadKeeper) -> None:
    image = png(6, 1, 3)
    info = await tk.put_blob(image)
    thread = await tk.open_thread()
    await thread.append([{"type": "message", "role": "user", "iteration": 0, "content": [{"type": "image", "blob": info.blob, "mediaType": "image/png"}]}])
    [read] = await thread.events()
    assert read["type"] == "message"
    assert read["content"] == [{"type": "image", "blob": info.blob, "mediaType": "image/png", "size": len(image), "width": 6, "height": 1}]


async def test_the_same_bytes_put_twice_are_one_blob(tk: AsyncThreadKeeper, tmp_path: Path) -> None:
    image = png(4, 4, 1)
    (tmp_path / "a.png").write_bytes(image)
    first = await tk.put_blob(image)
    assert first == BlobInfo(blob_id(image), "image/png", len(image), 4, 4)
    as_base64 = base64.b64encode(image).decode()
    for again in [bytearray(image), memoryview(image), tmp_path / "a.png", as_base64, "data:image/png;base64," + as_base64]:
        assert await tk.put_blob(again, media_type="image/png" if isinstance(again, bytearray) else None) == first
    assert await tk.stat_blob(first.blob) == first
    assert (await tk.get_blob(first.blob)).data == image
    text = await tk.put_blob(b"hello, blob", media_type="text/plain")
    assert text == BlobInfo(blob_id(b"hello, blob"), "text/plain", 11)
    assert (await tk.get_blob(text.blob)).data == b"hello, blob"


async def test_bad_base64_sent_as_it_is(tk: AsyncThreadKeeper) -> None:
    with pytest.raises(ThreadKeeperError) as put:
        await tk.put_blob("this is %%% not base64")
    assert (put.value.code, path_of(put.value)) == (ErrorCode.INVALID_PARAMS, "data")
    thread = await tk.open_thread()
    with pytest.raises(ThreadKeeperError) as append:
        await thread.append([{"type": "message", "role": "user", "iteration": 0, "content": [text_part("x"), {"type": "image", "data": "%%%"}]}])
    assert (append.value.code, path_of(append.value)) == (ErrorCode.INVALID_PARAMS, "events[0].content[1].data")
    assert await thread.events() == []
    with pytest.raises(ThreadKeeperError) as empty:
        await tk.put_blob(b"")
    assert (empty.value.code, path_of(empty.value)) == (ErrorCode.INVALID_PARAMS, "data")


async def test_a_media_type_the_bytes_contradict(tk: AsyncThreadKeeper) -> None:
    with pytest.raises(ThreadKeeperError) as put:
        await tk.put_blob(PDF, media_type="image/png")
    assert (put.value.code, path_of(put.value)) == (ErrorCode.INVALID_PARAMS, "mediaType")
    thread = await tk.open_thread()
    with pytest.raises(ThreadKeeperError) as append:
        await thread.append([{"type": "message", "role": "user", "iteration": 0, "content": [image_part(PDF, media_type="image/png")]}])
    assert (append.value.code, path_of(append.value)) == (ErrorCode.INVALID_PARAMS, "events[0].content[0].mediaType")
    with pytest.raises(ThreadKeeperError) as audio:
        await thread.append([{"type": "message", "role": "user", "iteration": 0, "content": [audio_part(png(1, 1))]}])
    assert (audio.value.code, path_of(audio.value)) == (ErrorCode.INVALID_PARAMS, "events[0].content[0].data")


async def test_a_blob_the_store_does_not_hold(tk: AsyncThreadKeeper) -> None:
    absent = blob_id(b"never put")
    for call in (tk.get_blob, tk.stat_blob):
        with pytest.raises(ThreadKeeperError) as info:
            await call(absent)
        assert (info.value.code, path_of(info.value)) == (ErrorCode.INVALID_PARAMS, "blob")
    with pytest.raises(ThreadKeeperError) as malformed:
        await tk.stat_blob("sha256:ABC")
    assert (malformed.value.code, path_of(malformed.value)) == (ErrorCode.INVALID_PARAMS, "blob")
    thread = await tk.open_thread()
    with pytest.raises(ThreadKeeperError) as append:
        await thread.append([{"type": "message", "role": "user", "iteration": 0, "content": [{"type": "image", "blob": absent, "mediaType": "image/png"}]}])
    assert (append.value.code, path_of(append.value)) == (ErrorCode.INVALID_PARAMS, "events[0].content[0].blob")


async def test_bytes_over_max_blob_bytes() -> None:
    small = await spawn("--max-blob-bytes", "1000")
    try:
        assert small.server["capabilities"]["limits"]["maxBlobBytes"] == 1000
        big = bytes([7]) * 2000
        with pytest.raises(ThreadKeeperError) as put:
            await small.put_blob(big, media_type="application/octet-stream")
        assert (put.value.code, put.value.data) == (ErrorCode.LIMIT_EXCEEDED, {"limit": "maxBlobBytes", "value": 2000, "max": 1000})
        thread = await small.open_thread()
        with pytest.raises(ThreadKeeperError) as append:
            await thread.append([{"type": "message", "role": "user", "iteration": 0, "content": [file_part(big, media_type="application/octet-stream")]}])
        assert (append.value.code, append.value.data) == (ErrorCode.LIMIT_EXCEEDED, {"limit": "maxBlobBytes", "value": 2000, "max": 1000})
        assert (await small.put_blob(png(1, 1))).width == 1  # under the limit is kept
    finally:
        await small.close()


async def test_an_image_header_over_65535_px_a_side(tk: AsyncThreadKeeper) -> None:
    with pytest.raises(ThreadKeeperError) as info:
        await tk.put_blob(png(70_000, 1))
    assert (info.value.code, path_of(info.value)) == (ErrorCode.INVALID_PARAMS, "data")


def test_blocking_client(blocking: ThreadKeeper, tmp_path: Path) -> None:
    image = png(7, 3, 5)
    (tmp_path / "shot.png").write_bytes(image)
    thread = blocking.open_thread()
    thread.append([{"type": "message", "role": "user", "iteration": 0, "content": [image_part(tmp_path / "shot.png", detail="high")]}])
    [read] = thread.events()
    assert read["type"] == "message" and not isinstance(read["content"], str)
    [part] = read["content"]
    assert part == {"type": "image", "blob": blob_id(image), "detail": "high", "mediaType": "image/png", "size": len(image), "width": 7, "height": 3}
    assert blocking.put_blob(image) == BlobInfo(blob_id(image), "image/png", len(image), 7, 3)
    assert blocking.stat_blob(blob_id(image)) == BlobInfo(blob_id(image), "image/png", len(image), 7, 3)
    assert blocking.get_blob(blob_id(image)).data == image
    with pytest.raises(ThreadKeeperError) as info:
        blocking.get_blob(blob_id(b"never put"))
    assert info.value.code == ErrorCode.INVALID_PARAMS


def test_blocking_format_renders_take_media(blocking: ThreadKeeper) -> None:
    thread = blocking.open_thread()
    shots = [png(4, 3, 100 + seed) for seed in range(5)]
    for i, shot in enumerate(shots):
        thread.append(
            [
                {"type": "tool_call", "toolName": "screenshot", "toolCallId": f"s{i}", "args": {}, "iteration": i},
                {"type": "tool_result", "toolCallId": f"s{i}", "iteration": i, "content": [image_part(shot)]},
            ]
        )
    for method, format, keys in FORMAT_RENDERS:
        kept = getattr(thread, method)(media=KEEP_TWO, media_tokens="text")
        assert with_bytes(kept, shots) == NEWEST_TWO, method
        assert kept == request_of(thread.render(format, media=KEEP_TWO, media_tokens="text"), *keys), method
    messages = thread.render_messages(media=KEEP_TWO)
    assert with_bytes(messages, shots) == NEWEST_TWO
    assert messages == thread.render("messages", media=KEEP_TWO)["messages"]
    # boto3's form decodes the bytes that are carried; the older images stay placeholders.
    decoded = thread.render_bedrock_converse(media=KEEP_TWO, boto3=True)
    assert repr(decoded).count("\\x89PNG") == 2
    with pytest.raises(ThreadKeeperError) as refused:
        thread.render_anthropic(media={"keepImages": 0})
    assert (refused.value.code, path_of(refused.value)) == (ErrorCode.INVALID_PARAMS, "options.media.keepImages")
