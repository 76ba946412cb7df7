"""Replays protocol/vectors/*.json against the real binary as protocol/vectors/README.md says:
each file on a fresh ``serve --store memory`` plus its ``args``, its exchanges in order (every
response read before the next message is sent; ``requestText`` sent verbatim), then the input
closed: no further message may come, and the exit status must be ``exitCode`` when the file
gives one. Messages are framed by this package's own framing code; this client speaks LSP
framing only, so that is the framing replayed (the server's own suite replays NDJSON too)."""

from __future__ import annotations

import asyncio
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from conftest import BINARY, MEMORY_ARGS, repo_root

from threadkeeper._framing import FrameDecoder, encode, frame

ANY = "<any>"
RESPONSE_TIMEOUT_S = 20.0
EXIT_TIMEOUT_S = 20.0


@dataclass(frozen=True)
class Exchange:
    #: Exactly one of them is set: a JSON value, or text sent verbatim.
    request: Any
    request_text: str | None
    #: The expected message; ``None`` when none may come.
    response: Any

    def body(self) -> bytes:
        return encode(self.request) if self.request_text is None else frame(self.request_text.encode("utf-8"))

    def label(self) -> str:
        return f"text {self.request_text[:60]!r}" if self.request_text is not None else json.dumps(self.request)[:120]


@dataclass(frozen=True)
class Vector:
    file: str
    description: str
    args: list[str]
    exit_code: int | None
    exchanges: list[Exchange]


def mismatches(expected: Any, actual: Any, path: str = "$", ordered: bool = False) -> list[str]:
    """Differences between an expected and an actual JSON value, as ``path: what`` lines.

    Objects must have exactly the expected keys, arrays the expected length; numbers compare by
    value; ``"<any>"`` matches any value that is present (a missing key is reported by the
    object above it). Key order counts only inside ``result.events``.
    """
    if isinstance(expected, str) and expected == ANY:
        return []
    if isinstance(expected, list):
        if not isinstance(actual, list):
            return [f"{path}: expected an array, got {actual!r}"]
        if len(actual) != len(expected):
            return [f"{path}: expected {len(expected)} items, got {len(actual)}: {actual!r}"]
        return [m for i, item in enumerate(expected) for m in mismatches(item, actual[i], f"{path}[{i}]", ordered)]
    if isinstance(expected, dict):
        if not isinstance(actual, dict):
            return [f"{path}: expected an object, got {actual!r}"]
        out: list[str] = []
        for key, value in expected.items():
            if key not in actual:
                out.append(f"{path}.{key}: missing")
                continue
            in_events = ordered or (key == "events" and path.endswith(".result"))
            out += mismatches(value, actual[key], f"{path}.{key}", in_events)
        out += [f"{path}.{key}: unexpected ({actual[key]!r})" for key in actual if key not in expected]
        if ordered and len(expected) == len(actual) and list(expected) != list(actual):
            out.append(f"{path}: key order {list(actual)}, expected {list(expected)}")
        return out
    # JSON has one number type: 1 and 1.0 are equal, but true is not 1.
    both_numbers = all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (expected, actual))
    same = (both_numbers or type(expected) is type(actual)) and expected == actual
    return [] if same else [f"{path}: expected {expected!r}, got {actual!r}"]


def load_vector(path: Path) -> Vector:
    """Reads one vector file, checking its format strictly (README "Format")."""
    raw = json.loads(path.read_text(encoding="utf-8"))
    file = path.name
    assert set(raw) <= {"name", "description", "args", "exitCode", "exchanges"}, f"{file}: unknown fields {set(raw)}"
    assert raw["name"] == path.stem, f"{file}: name must be the file name without .json"
    assert isinstance(raw["description"], str), f"{file}: description"
    args = raw.get("args", [])
    assert isinstance(args, list) and all(isinstance(a, str) for a in args), f"{file}: args must be strings"
    exit_code = raw.get("exitCode")
    assert exit_code is None or (isinstance(exit_code, int) and not isinstance(exit_code, bool)), f"{file}: exitCode"
    assert isinstance(raw["exchanges"], list) and raw["exchanges"], f"{file}: exchanges"
    exchanges = []
    for i, ex in enumerate(raw["exchanges"]):
        where = f"{file} exchange {i}"
        assert set(ex) <= {"request", "requestText", "response"}, f"{where}: unknown fields {set(ex)}"
        assert "response" in ex, f"{where}: response is required (null when none is expected)"
        assert ("request" in ex) != ("requestText" in ex), f"{where}: exactly one of request and requestText"
        text = ex.get("requestText")
        assert text is None or (isinstance(text, str) and "\n" not in text), f"{where}: requestText must be one line of text"
        exchanges.append(Exchange(ex.get("request"), text, ex["response"]))
    return Vector(file, raw["description"], args, exit_code, exchanges)


def vector_files() -> list[Path]:
    return sorted((repo_root() / "protocol" / "vectors").glob("*.json"))


def crate_version() -> str:
    """The version ``initialize`` must report (vectors match it with ``"<any>"``)."""
    manifest = (repo_root() / "Cargo.toml").read_text(encoding="utf-8")
    match = re.search(r'^\[package\][^\[]*?^version\s*=\s*"([^"]+)"', manifest, re.MULTILINE)
    assert match, "Cargo.toml has a package version"
    return match.group(1)


def test_there_are_vectors() -> None:
    assert len(vector_files()) >= 10


@pytest.mark.parametrize("path", vector_files(), ids=lambda p: p.name)
async def test_vector(path: Path) -> None:
    vector = load_vector(path)
    process = await asyncio.create_subprocess_exec(
        BINARY, *MEMORY_ARGS, *vector.args, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
    )
    assert process.stdin and process.stdout and process.stderr
    stdout, stdin = process.stdout, process.stdin
    decoder = FrameDecoder()
    inbox: list[Any] = []

    async def next_message() -> Any:
        while not inbox:
            chunk = await asyncio.wait_for(stdout.read(65536), RESPONSE_TIMEOUT_S)
            if not chunk:
                stderr = await process.stderr.read()  # type: ignore[union-attr]
                pytest.fail(f"the server ended instead of answering; stderr: {stderr.decode()}")
            inbox.extend(json.loads(body) for body in decoder.feed(chunk))
        return inbox.pop(0)

    try:
        for i, exchange in enumerate(vector.exchanges):
            stdin.write(exchange.body())
            await stdin.drain()
            if exchange.response is None:
                continue
            actual = await next_message()
            diff = mismatches(exchange.response, actual)
            assert diff == [], f"exchange {i} ({exchange.label()}): " + "; ".join(diff) + f"\n    got: {json.dumps(actual)}"
            if isinstance(exchange.request, dict) and exchange.request.get("method") == "initialize":
                reported = (actual.get("result") or {}).get("serverInfo", {}).get("version")
                assert reported in (None, crate_version()), f"exchange {i}: serverInfo.version {reported!r}"
        stdin.close()
        rest = await asyncio.wait_for(stdout.read(), EXIT_TIMEOUT_S)
        inbox.extend(json.loads(body) for body in decoder.feed(rest))
        assert inbox == [], "no messages beyond the expected responses"
        assert decoder.pending_bytes == 0, "no partial message at the end of the output"
        status = await asyncio.wait_for(process.wait(), EXIT_TIMEOUT_S)
        if vector.exit_code is not None:
            assert status == vector.exit_code, f"exit status {status}, expected {vector.exit_code}"
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()


def test_the_matcher() -> None:
    assert mismatches({"a": ANY, "b": [1, {"c": 2}]}, {"a": {"x": 1}, "b": [1, {"c": 2}]}) == []
    assert mismatches({"a": ANY}, {}) == ["$.a: missing"]
    assert mismatches({"b": [1, {"c": 2}]}, {"b": [1, {"c": 3}], "d": 0}) == ["$.b[1].c: expected 2, got 3", "$.d: unexpected (0)"]
    assert mismatches(1, 1.0) == []
    assert mismatches(18446744073709551615, 18446744073709551614) == ["$: expected 18446744073709551615, got 18446744073709551614"]
    assert mismatches(True, 1) == ["$: expected True, got 1"]
    assert mismatches(None, None) == []
    assert mismatches(None, False) == ["$: expected None, got False"]
    assert mismatches({"x": 1, "y": 2}, {"y": 2, "x": 1}) == [], "order does not count outside events"
    expected = {"result": {"events": [{"type": "x", "iteration": 0, "nested": {"a": 1, "b": 2}}]}}
    assert mismatches(expected, {"result": {"events": [{"type": "x", "iteration": 0, "nested": {"a": 1, "b": 2}}]}}) == []
    assert mismatches(expected, {"result": {"events": [{"iteration": 0, "type": "x", "nested": {"b": 2, "a": 1}}]}}) == [
        "$.result.events[0].nested: key order ['b', 'a'], expected ['a', 'b']",
        "$.result.events[0]: key order ['iteration', 'type', 'nested'], expected ['type', 'iteration', 'nested']",
    ]
    batch = [{"result": {"events": [{"iteration": 0, "type": "x", "nested": {"a": 1, "b": 2}}]}}]
    assert mismatches([expected], batch) == ["$[0].result.events[0]: key order ['iteration', 'type', 'nested'], expected ['type', 'iteration', 'nested']"]
    assert mismatches({"params": {"events": [{"b": 1, "a": 2}]}}, {"params": {"events": [{"a": 2, "b": 1}]}}) == [], "only result.events"


def test_request_text_is_sent_verbatim() -> None:
    text = '{"jsonrpc": "2.0", "id": 1, "method":'
    assert Exchange(None, text, None).body() == b"Content-Length: 37\r\n\r\n" + text.encode()
    assert Exchange({"id": 18446744073709551615}, None, None).body() == b'Content-Length: 27\r\n\r\n{"id":18446744073709551615}'
