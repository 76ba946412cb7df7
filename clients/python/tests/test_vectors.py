"""Replays protocol/vectors/*.json against the real binary: each file on a fresh server, its
exchanges in order, each request written as is and the next message read and compared with the
expected response (``"<any>"`` matches any value; ``null`` means no response)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from conftest import BINARY, MEMORY_ARGS, repo_root

from threadkeeper._framing import FrameDecoder, encode

ANY = "<any>"
RESPONSE_TIMEOUT_S = 10.0


def mismatches(expected: Any, actual: Any, path: str = "$") -> list[str]:
    """Differences between an expected and an actual JSON value, as ``path: what`` lines."""
    if expected == ANY:
        return []
    if isinstance(expected, list):
        if not isinstance(actual, list):
            return [f"{path}: expected an array, got {actual!r}"]
        if len(actual) != len(expected):
            return [f"{path}: expected {len(expected)} items, got {len(actual)}: {actual!r}"]
        return [m for i, item in enumerate(expected) for m in mismatches(item, actual[i], f"{path}[{i}]")]
    if isinstance(expected, dict):
        if not isinstance(actual, dict):
            return [f"{path}: expected an object, got {actual!r}"]
        out = [m for key, value in expected.items() for m in (mismatches(value, actual[key], f"{path}.{key}") if key in actual else [f"{path}.{key}: missing"])]
        return out + [f"{path}.{key}: unexpected ({actual[key]!r})" for key in actual if key not in expected]
    # JSON has one number type: 1 and 1.0 are equal, but true is not 1.
    same = type(expected) is type(actual) or (isinstance(expected, (int, float)) and isinstance(actual, (int, float)) and not isinstance(expected, bool) and not isinstance(actual, bool))
    return [] if same and expected == actual else [f"{path}: expected {expected!r}, got {actual!r}"]


def vector_files() -> list[Path]:
    return sorted((repo_root() / "protocol" / "vectors").glob("*.json"))


def test_there_are_vectors() -> None:
    assert len(vector_files()) >= 3


@pytest.mark.parametrize("path", vector_files(), ids=lambda p: p.name)
async def test_vector(path: Path) -> None:
    vector = json.loads(path.read_text())
    process = await asyncio.create_subprocess_exec(
        BINARY, *MEMORY_ARGS, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
    )
    assert process.stdin and process.stdout and process.stderr
    decoder = FrameDecoder()
    inbox: list[Any] = []

    async def next_message() -> Any:
        while not inbox:
            assert process.stdout is not None
            chunk = await asyncio.wait_for(process.stdout.read(65536), RESPONSE_TIMEOUT_S)
            assert chunk, f"no response; server stderr: {(await process.stderr.read()).decode()}"  # type: ignore[union-attr]
            inbox.extend(json.loads(body) for body in decoder.feed(chunk))
        return inbox.pop(0)

    try:
        for i, exchange in enumerate(vector["exchanges"]):
            process.stdin.write(encode(exchange["request"]))
            await process.stdin.drain()
            if exchange["response"] is None:
                continue
            actual = await next_message()
            diff = mismatches(exchange["response"], actual)
            assert diff == [], f"exchange {i} ({json.dumps(exchange['request'])[:120]}): " + "; ".join(diff)
        process.stdin.close()
        rest = await asyncio.wait_for(process.stdout.read(), RESPONSE_TIMEOUT_S)
        inbox.extend(json.loads(body) for body in decoder.feed(rest))
        assert inbox == [], "no messages beyond the expected responses"
        await asyncio.wait_for(process.wait(), RESPONSE_TIMEOUT_S)
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()


def test_the_matcher() -> None:
    assert mismatches({"a": ANY, "b": [1, {"c": 2}]}, {"a": {"x": 1}, "b": [1, {"c": 2}]}) == []
    assert mismatches({"a": ANY}, {}) == ["$.a: missing"]
    assert mismatches({"b": [1, {"c": 2}]}, {"b": [1, {"c": 3}], "d": 0}) == ["$.b[1].c: expected 2, got 3", "$.d: unexpected (0)"]
    assert mismatches(1, 1.0) == []
    assert mismatches(True, 1) == ["$: expected True, got 1"]
    assert mismatches(None, None) == []
