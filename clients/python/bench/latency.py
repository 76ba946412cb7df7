"""A small call through each client against the raw pipe round trip, measured in the same run.

The floor is an echo process (``cat``) over the same kind of pipes, written to and read from
with no client library: asyncio subprocess streams for the asyncio client, blocking
``os.write``/``os.read`` for the blocking one (which does the same on its own transport, no event
loop, so its target is at most 1.5x that raw round trip to the server). The same raw round trip to the server itself
separates the server's share from the client library's. Rounds alternate between the scenarios so that load
from other processes falls on all of them alike.

    THREADKEEPER_BIN=target/release/threadkeeper clients/python/.venv/bin/python clients/python/bench/latency.py

With THREADKEEPER_BENCH_BEFORE=<another build of the server> the server scenarios run against
both builds, round by round, and both are reported.

Where the processes run moves a pipe round trip more than anything measured (an idle core of a
small virtual machine takes tens of microseconds to wake), and the kernel picks anew for every
process spawned. So the run fixes the placement (Linux), BENCH_PLACEMENT:

    one-core (default)  this process, its threads and every process it spawns on one CPU;
    free                wherever the kernel puts them.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

from threadkeeper import AsyncThreadKeeper, ThreadKeeper, find_binary  # noqa: E402
from threadkeeper._framing import FrameDecoder, encode  # noqa: E402

ROUNDS = int(os.environ.get("BENCH_ROUNDS", 5))
CALLS = int(os.environ.get("BENCH_CALLS", 1000))
WARMUP = 200
TEXT = 'a < b & "c"'
PLACEMENT = os.environ.get("BENCH_PLACEMENT", "one-core")
PINNED_CPU = 0
REQUEST = encode({"jsonrpc": "2.0", "id": 1, "method": "xml/escape", "params": {"text": TEXT}})


def timed(call: Callable[[], object], samples: list[float]) -> None:
    for i in range(WARMUP + CALLS):
        start = time.perf_counter()
        call()
        if i >= WARMUP:
            samples.append(time.perf_counter() - start)


async def timed_async(call: Callable[[], object], samples: list[float]) -> None:
    for i in range(WARMUP + CALLS):
        start = time.perf_counter()
        await call()  # type: ignore[misc]
        if i >= WARMUP:
            samples.append(time.perf_counter() - start)


class BlockingPipe:
    """Frames written and read with plain syscalls: the least any blocking client can do."""

    def __init__(self, command: list[str]) -> None:
        self.process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)
        assert self.process.stdin is not None and self.process.stdout is not None
        self.write_fd, self.read_fd = self.process.stdin.fileno(), self.process.stdout.fileno()
        self.decoder = FrameDecoder()

    def call(self, frame: bytes = REQUEST) -> object:
        os.write(self.write_fd, frame)
        bodies: list[bytes] = []
        while not bodies:
            bodies = self.decoder.feed(os.read(self.read_fd, 65536))
        return json.loads(bodies[0])

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        self.process.wait()


async def async_pipe(command: list[str], samples: list[float]) -> None:
    """Frames over asyncio subprocess streams, read by the caller itself: the least an asyncio client can do."""
    process = await asyncio.create_subprocess_exec(*command, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE)
    assert process.stdin is not None and process.stdout is not None
    stdin, stdout, decoder = process.stdin, process.stdout, FrameDecoder()

    async def call(frame: bytes = REQUEST) -> object:
        stdin.write(frame)
        await stdin.drain()
        bodies: list[bytes] = []
        while not bodies:
            bodies = decoder.feed(await stdout.read(65536))
        return json.loads(bodies[0])

    if command[0] != "cat":
        await call(encode({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {}}))
    await timed_async(call, samples)
    stdin.close()
    await process.wait()


async def async_client(binary: str, samples: list[float]) -> None:
    async with AsyncThreadKeeper.spawn(binary=binary, args=["--store", "memory"]) as tk:
        await timed_async(lambda: tk.escape_xml(TEXT), samples)


def blocking_pipe(command: list[str], samples: list[float]) -> None:
    pipe = BlockingPipe(command)
    if command[0] != "cat":
        pipe.call(encode({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {}}))
    timed(pipe.call, samples)
    pipe.close()


def blocking_client(binary: str, samples: list[float]) -> None:
    with ThreadKeeper.spawn(binary=binary, args=["--store", "memory"]) as tk:
        timed(lambda: tk.escape_xml(TEXT), samples)


def p50(samples: list[float]) -> float:
    return sorted(samples)[len(samples) // 2] * 1e6


def p99(samples: list[float]) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))] * 1e6


def place() -> str:
    """Applies BENCH_PLACEMENT before anything is spawned (children and threads inherit it)."""
    if PLACEMENT not in ("one-core", "free"):
        raise SystemExit(f"BENCH_PLACEMENT: one-core or free, not {PLACEMENT!r}")
    if PLACEMENT == "free":
        return "placed by the kernel"
    if not hasattr(os, "sched_setaffinity") or len(os.sched_getaffinity(0)) < 2:
        return "placed by the kernel (one-core needs Linux with two CPUs)"
    os.sched_setaffinity(0, {PINNED_CPU})
    return f"everything on CPU {PINNED_CPU}"


def main() -> None:
    where = place()
    # THREADKEEPER_BENCH_BEFORE: a second server binary (say, the build before a change), measured
    # in the same rounds, so that before and after are compared under the same load.
    builds = [("", find_binary())]
    if before := os.environ.get("THREADKEEPER_BENCH_BEFORE"):
        builds = [("before: ", before), ("after: ", builds[0][1])]
    names = ["echo, asyncio pipes", "echo, blocking pipes"]
    for label, _ in builds:
        names += [f"{label}{name}" for name in ["server, asyncio pipes", "asyncio client", "server, blocking pipes", "blocking client"]]
    samples: dict[str, list[float]] = {name: [] for name in names}
    for _ in range(ROUNDS):
        asyncio.run(async_pipe(["cat"], samples["echo, asyncio pipes"]))
        blocking_pipe(["cat"], samples["echo, blocking pipes"])
        for label, binary in builds:
            asyncio.run(async_pipe([binary, "--store", "memory"], samples[f"{label}server, asyncio pipes"]))
            asyncio.run(async_client(binary, samples[f"{label}asyncio client"]))
            blocking_pipe([binary, "--store", "memory"], samples[f"{label}server, blocking pipes"])
            blocking_client(binary, samples[f"{label}blocking client"])
    binaries = ", ".join(f"{label}{binary}" for label, binary in builds)
    print(f"xml/escape round trips, {ROUNDS} rounds x {CALLS} calls each, {where}; {binaries}; load average {os.getloadavg()[0]:.1f}")
    for name in names:
        print(f"  {name:32} p50 {p50(samples[name]):6.1f} µs   p99 {p99(samples[name]):7.1f} µs")
    for label, _ in builds:
        for kind, target in [("asyncio", 2.5), ("blocking", 1.5)]:
            client, raw = p50(samples[f"{label}{kind} client"]), p50(samples[f"{label}server, {kind} pipes"])
            echo = p50(samples[f"echo, {kind} pipes"])
            verdict = "yes" if client / raw <= target else "NO"
            print(
                f"{label}{kind} client: {client / echo:.2f}x the echo floor, {client / raw:.2f}x the server over the same"
                f" raw pipes (within {target}x: {verdict})"
            )


if __name__ == "__main__":
    main()
