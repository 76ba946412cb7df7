"""A stand-in server for what the real one cannot do on demand: a request that is never answered.

Answers ``initialize`` and ``shutdown`` as the real server does, never answers ``test/hang``,
and answers ``test/cancelled`` with the ids of every ``$/cancelRequest`` it has read.
"""

from __future__ import annotations

import json
import sys

sys.path.insert(0, sys.argv[1])  # the package's src, for its framing
from threadkeeper._framing import FrameDecoder, encode  # noqa: E402


def main() -> None:
    decoder = FrameDecoder()
    cancelled: list[object] = []
    out = sys.stdout.buffer
    while chunk := sys.stdin.buffer.read1(65536):
        for body in decoder.feed(chunk):
            message = json.loads(body)
            method = message.get("method")
            if method == "exit":
                return
            if method == "$/cancelRequest":
                cancelled.append(message["params"]["id"])
                continue
            results = {"initialize": {"serverInfo": {"name": "fake"}, "protocolVersion": 1, "capabilities": {}}, "shutdown": None, "test/cancelled": cancelled}
            if method in results:
                out.write(encode({"jsonrpc": "2.0", "id": message["id"], "result": results[method]}))
                out.flush()


if __name__ == "__main__":
    main()
