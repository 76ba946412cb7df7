"""A computer-use-shaped run with a screenshot every step, kept by threadkeeper and by two peers.

Each step is a `computer` tool call answered by a tool result holding a screenshot. A third of
the steps show a screenshot seen before (an unchanged screen). The same steps are kept by:

- threadkeeper's SQLite store, through the protocol (each image sent once as base64 `data`,
  stored once by its hash);
- the OpenAI Agents SDK's `SQLiteSession` (`function_call_output` items with `input_image`
  data URLs, as the SDK keeps them);
- LangGraph's SQLite checkpointer (a `MessagesState` graph; tool messages with standard image
  blocks in base64, as a LangGraph agent keeps them).

Figures, all from this one run: store bytes against the unique image bytes; threadkeeper's
append p50 with an image against the same steps without one (two servers, steps alternated);
the render time of an Anthropic request holding 20 images; the server's peak resident memory.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
import os
import random
import sqlite3
import statistics
import struct
import subprocess
import sys
import tempfile
import time
import zlib
from pathlib import Path


def png(width: int, height: int, rng: random.Random) -> bytes:
    """A PNG of noise: incompressible, so its size is what a busy screenshot's is."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    rows = b"".join(b"\x00" + rng.randbytes(width * 3) for _ in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows, 1)) + chunk(b"IEND", b"")


def screenshots(steps: int, image_kb: int, seed: int = 7) -> list[bytes]:
    """One screenshot a step; every third step repeats one seen before."""
    rng = random.Random(seed)
    width = 320
    height = max(1, image_kb * 1024 // (width * 3))
    shots: list[bytes] = []
    for step in range(steps):
        if step % 3 == 2:
            shots.append(shots[rng.randrange(len(shots))])
        else:
            shots.append(png(width, height, rng))
    return shots


def data_url(image: bytes) -> str:
    return "data:image/png;base64," + base64.b64encode(image).decode()


class Server:
    """threadkeeper over NDJSON on real pipes."""

    def __init__(self, binary: str, store: str) -> None:
        self.proc = subprocess.Popen(
            [binary, "serve", "--store", store],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        self.next_id = 0
        self.call("initialize", {})

    def call(self, method: str, params: dict) -> dict:
        self.next_id += 1
        message = {"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params}
        assert self.proc.stdin and self.proc.stdout
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")
        self.proc.stdin.flush()
        answer = json.loads(self.proc.stdout.readline())
        if "error" in answer:
            raise RuntimeError(f"{method}: {answer['error']}")
        return answer["result"]

    def peak_memory_kb(self) -> int:
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
        return 0

    def close(self) -> None:
        self.call("shutdown", {})
        assert self.proc.stdin
        self.proc.stdin.write(b'{"jsonrpc":"2.0","method":"exit"}\n')
        self.proc.stdin.close()
        self.proc.wait(timeout=60)


def step_events(step: int, image: bytes | None) -> list[dict]:
    call_id = f"call_{step}"
    content: list[dict] = [{"type": "text", "text": "screenshot taken"}]
    if image is not None:
        content.append({"type": "image", "data": base64.b64encode(image).decode(), "mediaType": "image/png"})
    return [
        {"type": "tool_call", "toolName": "computer", "toolCallId": call_id, "args": {"action": "screenshot"}, "iteration": step + 1},
        {"type": "tool_result", "toolCallId": call_id, "iteration": step + 1, "content": content},
    ]


def sqlite_bytes(path: Path) -> int:
    """The database's size once its write-ahead log is folded in."""
    with sqlite3.connect(path) as db:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return sum(p.stat().st_size for p in path.parent.glob(path.name + "*"))


def run_threadkeeper(binary: str, shots: list[bytes], work: Path) -> dict:
    with_images = Server(binary, f"sqlite:{work / 'tk-images.db'}")
    without = Server(binary, f"sqlite:{work / 'tk-text.db'}")
    first = [{"type": "message", "role": "user", "content": "Book the cheapest flight to Lisbon.", "iteration": 0}]
    for server in (with_images, without):
        server.call("thread/open", {"threadId": "run"})
        server.call("thread/append", {"threadId": "run", "events": first})
    timed_images, timed_text = [], []
    for step, shot in enumerate(shots):
        # Alternate the two servers step by step, so both see the same machine.
        started = time.perf_counter()
        with_images.call("thread/append", {"threadId": "run", "events": step_events(step, shot)})
        timed_images.append(time.perf_counter() - started)
        started = time.perf_counter()
        without.call("thread/append", {"threadId": "run", "events": step_events(step, None)})
        timed_text.append(time.perf_counter() - started)
    # A request holding 20 images: the last 20 steps of a thread of their own.
    with_images.call("thread/open", {"threadId": "twenty"})
    with_images.call("thread/append", {"threadId": "twenty", "events": first})
    for step, shot in enumerate(shots[-20:]):
        with_images.call("thread/append", {"threadId": "twenty", "events": step_events(step, shot)})
    renders = []
    for _ in range(21):
        started = time.perf_counter()
        body = with_images.call("thread/render", {"threadId": "twenty", "format": "anthropic"})
        renders.append(time.perf_counter() - started)
    request_bytes = len(json.dumps(body))
    peak_kb = with_images.peak_memory_kb()
    with_images.close()
    without.close()
    return {
        "store_bytes": sqlite_bytes(work / "tk-images.db"),
        "text_store_bytes": sqlite_bytes(work / "tk-text.db"),
        "append_p50_image_ms": statistics.median(timed_images) * 1e3,
        "append_p50_text_ms": statistics.median(timed_text) * 1e3,
        "render20_p50_ms": statistics.median(renders[1:]) * 1e3,
        "render20_request_bytes": request_bytes,
        "peak_rss_mb": peak_kb / 1024,
    }


def run_agents_sdk(shots: list[bytes], work: Path) -> int:
    from agents import SQLiteSession  # type: ignore[import-not-found]

    path = work / "agents.db"
    session = SQLiteSession("run", str(path))

    async def fill() -> None:
        await session.add_items([{"role": "user", "content": "Book the cheapest flight to Lisbon."}])
        for step, shot in enumerate(shots):
            call_id = f"call_{step}"
            await session.add_items(
                [
                    {"type": "function_call", "call_id": call_id, "name": "computer", "arguments": '{"action":"screenshot"}'},
                    {
                        "type": "function_call_output",
                        "call_id": call_id,
                        "output": [
                            {"type": "input_text", "text": "screenshot taken"},
                            {"type": "input_image", "image_url": data_url(shot)},
                        ],
                    },
                ]
            )

    asyncio.run(fill())
    session.close()
    return sqlite_bytes(path)


def run_langgraph(shots: list[bytes], work: Path) -> int:
    from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
    from langgraph.checkpoint.sqlite import SqliteSaver  # type: ignore[import-not-found]
    from langgraph.graph import START, MessagesState, StateGraph

    path = work / "langgraph.db"
    connection = sqlite3.connect(path, check_same_thread=False)
    graph = StateGraph(MessagesState)
    graph.add_node("record", lambda state: {})
    graph.add_edge(START, "record")
    app = graph.compile(checkpointer=SqliteSaver(connection))
    config = {"configurable": {"thread_id": "run"}}
    app.invoke({"messages": [HumanMessage("Book the cheapest flight to Lisbon.")]}, config)
    for step, shot in enumerate(shots):
        call_id = f"call_{step}"
        call = AIMessage("", tool_calls=[{"id": call_id, "name": "computer", "args": {"action": "screenshot"}}])
        image = {"type": "image", "base64": base64.b64encode(shot).decode(), "mime_type": "image/png"}
        result = ToolMessage([{"type": "text", "text": "screenshot taken"}, image], tool_call_id=call_id)
        app.invoke({"messages": [call, result]}, config)
    connection.close()
    return sqlite_bytes(path)


def table(figures: dict) -> str:
    unique = figures["unique_image_bytes"]
    mb = lambda n: f"{n / 1e6:,.1f} MB"  # noqa: E731
    ratio = lambda n: f"{n / unique:.2f}×"  # noqa: E731
    rows = [
        f"Run: {figures['steps']} steps, one screenshot each ({figures['image_kb']} KB PNG), a third of them repeats: "
        f"{mb(figures['all_image_bytes'])} of screenshots, {mb(unique)} unique.",
        "",
        "| store | bytes on disk | × unique image bytes |",
        "|---|---|---|",
        f"| threadkeeper, SQLite | {mb(figures['threadkeeper']['store_bytes'])} | {ratio(figures['threadkeeper']['store_bytes'])} |",
        f"| OpenAI Agents SDK `SQLiteSession` | {mb(figures['agents_sdk'])} | {ratio(figures['agents_sdk'])} |",
        f"| LangGraph `SqliteSaver`, first {figures['langgraph_steps']} steps only | {mb(figures['langgraph'])} | "
        f"{figures['langgraph'] / figures['langgraph_unique']:.2f}× its steps' unique bytes |",
        "",
        "| threadkeeper figure | value |",
        "|---|---|",
        f"| append p50, step with a screenshot (sent as base64, hashed, stored once) | {figures['threadkeeper']['append_p50_image_ms']:.2f} ms |",
        f"| append p50, the same step without it (second server, steps alternated) | {figures['threadkeeper']['append_p50_text_ms']:.2f} ms |",
        f"| render p50 of an `anthropic` request holding 20 screenshots ({mb(figures['threadkeeper']['render20_request_bytes'])}) | {figures['threadkeeper']['render20_p50_ms']:.1f} ms |",
        f"| server peak resident memory (VmHWM) at the end | {figures['threadkeeper']['peak_rss_mb']:.0f} MB |",
        f"| the text-only thread's store | {mb(figures['threadkeeper']['text_store_bytes'])} |",
    ]
    return "\n".join(rows)


def write_into(path: Path, text: str) -> None:
    begin, end = "<!-- media-run:begin -->", "<!-- media-run:end -->"
    doc = path.read_text()
    block = f"{begin}\n{text}\n{end}"
    if begin in doc and end in doc:
        doc = doc[: doc.index(begin)] + block + doc[doc.index(end) + len(end) :]
    else:
        doc = doc.rstrip("\n") + "\n\n" + block + "\n"
    path.write_text(doc)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bin", required=True)
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--image-kb", type=int, default=250)
    parser.add_argument(
        "--langgraph-steps",
        type=int,
        default=40,
        help="steps kept by LangGraph: it writes the whole state every step, so its store grows with the square of the steps "
        "(300 steps of 250 KB would take tens of GB)",
    )
    parser.add_argument("--write", type=Path)
    args = parser.parse_args()
    shots = screenshots(args.steps, args.image_kb)
    unique = {zlib.crc32(s): len(s) for s in shots}
    figures: dict = {
        "steps": args.steps,
        "image_kb": args.image_kb,
        "all_image_bytes": sum(len(s) for s in shots),
        "unique_image_bytes": sum(unique.values()),
    }
    with tempfile.TemporaryDirectory(prefix="media-run-") as tmp:
        work = Path(tmp)
        figures["threadkeeper"] = run_threadkeeper(args.bin, shots, work)
        figures["agents_sdk"] = run_agents_sdk(shots, work)
        prefix = shots[: args.langgraph_steps]
        figures["langgraph_steps"] = len(prefix)
        figures["langgraph_unique"] = sum({zlib.crc32(s): len(s) for s in prefix}.values())
        figures["langgraph"] = run_langgraph(prefix, work)
    text = table(figures)
    print(text)
    if args.write:
        write_into(args.write, text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
