"""Client-side cost of the sidecar: per-call overhead of a small request, and an agent loop
(each step appends 4 events and renders the XML document) run three ways: the whole document
from the sidecar each step, XML deltas from the sidecar, and an in-process serializer.

    THREADKEEPER_BIN=target/release/threadkeeper clients/python/.venv/bin/python clients/python/bench/bench.py
"""

from __future__ import annotations

import asyncio
import os
import platform
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from bench.reference_serializer import serialize_thread_to_xml  # noqa: E402
from conftest import loop_events  # noqa: E402

from threadkeeper import AsyncThreadKeeper, ThreadKeeper  # noqa: E402

CALLS = int(os.environ.get("BENCH_CALLS", 2000))
STEPS = int(os.environ.get("BENCH_STEPS", 1000))


def summary(samples_s: list[float]) -> str:
    ordered = sorted(samples_s)
    p50 = ordered[len(ordered) // 2]
    p99 = ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))]
    return (
        f"p50 {p50 * 1e6:.0f} µs, p99 {p99 * 1e6:.0f} µs, mean {statistics.fmean(samples_s) * 1e6:.0f} µs, "
        f"total {sum(samples_s) * 1e3:.0f} ms"
    )


async def main() -> None:
    tk = await AsyncThreadKeeper.spawn(args=["--store", "memory"])
    print(f"server {tk.server['serverInfo']['version']} at {tk.binary}; Python {platform.python_version()}")

    for _ in range(200):
        await tk.escape_xml("warm <up>")
    samples = []
    for i in range(CALLS):
        start = time.perf_counter()
        await tk.escape_xml(f"a < b & {i}")
        samples.append(time.perf_counter() - start)
    print(f"xml/escape, {CALLS} sequential calls (asyncio): {summary(samples)}")

    start = time.perf_counter()
    await asyncio.gather(*(tk.escape_xml(f"a < b & {i}") for i in range(CALLS)))
    total = time.perf_counter() - start
    print(f"xml/escape, {CALLS} calls in flight (asyncio): total {total * 1e3:.0f} ms ({total / CALLS * 1e6:.1f} µs per call)")

    events = loop_events(STEPS * 4)

    async def sidecar_loop(incremental: bool) -> tuple[list[float], str]:
        thread = await tk.open_thread()
        steps: list[float] = []
        xml = ""
        for step in range(STEPS):
            batch = events[step * 4 : step * 4 + 4]
            start = time.perf_counter()
            await thread.append(batch)
            xml = await thread.render_xml(incremental=incremental)
            steps.append(time.perf_counter() - start)
        await thread.delete()
        return steps, xml

    whole, whole_xml = await sidecar_loop(False)
    print(f"agent loop via sidecar, whole document each step (append 4 + render xml), {STEPS} steps: {summary(whole)}")
    deltas, deltas_xml = await sidecar_loop(True)
    print(f"agent loop via sidecar, XML deltas (append 4 + render_xml(incremental=True)), {STEPS} steps: {summary(deltas)}")

    local: list[dict[str, Any]] = []
    reference: list[float] = []
    local_xml = ""
    for step in range(STEPS):
        batch = events[step * 4 : step * 4 + 4]
        start = time.perf_counter()
        local.extend(batch)
        local_xml = serialize_thread_to_xml(local)
        reference.append(time.perf_counter() - start)
    print(f"agent loop in-process reference (extend 4 + serialize all), {STEPS} steps: {summary(reference)}")
    print(f"final documents equal: {whole_xml == local_xml and deltas_xml == local_xml} ({len(local_xml)} chars)")
    print(
        f"last 100 steps, mean: sidecar whole {statistics.fmean(whole[-100:]) * 1e3:.2f} ms, "
        f"sidecar deltas {statistics.fmean(deltas[-100:]) * 1e3:.2f} ms, "
        f"in-process {statistics.fmean(reference[-100:]) * 1e3:.2f} ms"
    )
    await tk.close()


def sync_overhead() -> None:
    with ThreadKeeper.spawn(args=["--store", "memory"]) as tk:
        for _ in range(200):
            tk.escape_xml("warm <up>")
        samples = []
        for i in range(CALLS):
            start = time.perf_counter()
            tk.escape_xml(f"a < b & {i}")
            samples.append(time.perf_counter() - start)
        print(f"xml/escape, {CALLS} sequential calls (blocking client): {summary(samples)}")


if __name__ == "__main__":
    asyncio.run(main())
    sync_overhead()
