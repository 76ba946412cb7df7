"""JSON-RPC 2.0 over a child process's stdio, with LSP framing.

One reader task matches responses to pending calls by id; one task keeps the tail of the
child's stderr (reading it also keeps the child from blocking on a full pipe). When stdout
ends, every pending call fails at once with a :class:`ServerExitedError` that carries the exit
status and the stderr tail, and so does every later call.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import math
import os
from collections import deque
from collections.abc import Mapping, Sequence
from typing import Any

from ._framing import FrameDecoder, FramingError, encode
from .errors import RequestTimeoutError, ServerExitedError, ThreadKeeperError

STDERR_TAIL_BYTES = 8 * 1024
READ_CHUNK_BYTES = 256 * 1024
#: How long to wait, once stdout has ended, for the exit status and the last of stderr.
EXIT_REPORT_WAIT_S = 2.0
#: How long ``close()`` waits for the process before killing it.
CLOSE_TIMEOUT_S = 5.0


class _StderrTail:
    def __init__(self) -> None:
        self._chunks: deque[bytes] = deque()
        self._size = 0

    def push(self, chunk: bytes) -> None:
        self._chunks.append(chunk)
        self._size += len(chunk)
        while self._chunks and self._size - len(self._chunks[0]) >= STDERR_TAIL_BYTES:
            self._size -= len(self._chunks.popleft())

    def text(self) -> str:
        data = b"".join(self._chunks)[-STDERR_TAIL_BYTES:]
        return data.decode("utf-8", errors="replace").strip()


class Connection:
    """A running server process and the calls in flight to it."""

    def __init__(self, process: asyncio.subprocess.Process, binary: str) -> None:
        self.process = process
        self.binary = binary
        self.max_frame_bytes: int | None = None
        self._ids = itertools.count(1)
        self._pending: dict[int, asyncio.Future[Any]] = {}
        self._stderr = _StderrTail()
        self._write_lock = asyncio.Lock()
        self._stopped: ServerExitedError | None = None
        self._stderr_task = asyncio.create_task(self._read_stderr())
        self._reader_task = asyncio.create_task(self._read_stdout())
        self.closed = asyncio.get_running_loop().create_future()

    @classmethod
    async def start(cls, binary: str, args: Sequence[str], env: Mapping[str, str] | None, cwd: str | os.PathLike[str] | None) -> Connection:
        try:
            process = await asyncio.create_subprocess_exec(
                binary,
                *args,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                env=dict(env) if env is not None else None,
                cwd=cwd,
            )
        except OSError as error:
            raise ServerExitedError(f"could not run {binary}: {error}", None, "") from error
        return cls(process, binary)

    @property
    def stopped(self) -> ServerExitedError | None:
        return self._stopped

    async def _read_stderr(self) -> None:
        stream = self.process.stderr
        assert stream is not None
        while chunk := await stream.read(READ_CHUNK_BYTES):
            self._stderr.push(chunk)

    async def _read_stdout(self) -> None:
        stream = self.process.stdout
        assert stream is not None
        decoder = FrameDecoder()
        failure: str | None = None
        try:
            while chunk := await stream.read(READ_CHUNK_BYTES):
                for body in decoder.feed(chunk):
                    self._dispatch(json.loads(body))
        except (FramingError, ValueError) as error:
            failure = f"the server sent a malformed message ({error})"
        await self._on_exit(failure)

    def _dispatch(self, message: Any) -> None:
        messages = message if isinstance(message, list) else [message]
        for item in messages:
            if not isinstance(item, dict) or "method" in item:
                continue  # the server sends no requests or notifications in protocol v1
            request_id = item.get("id")
            future = self._pending.pop(request_id, None) if isinstance(request_id, int) else None
            if future is None or future.done():
                continue
            if "error" in item:
                error = item["error"]
                future.set_exception(ThreadKeeperError(int(error.get("code", 0)), str(error.get("message", "")), error.get("data")))
            else:
                future.set_result(item.get("result"))

    async def _on_exit(self, failure: str | None) -> None:
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(asyncio.shield(self.process.wait()), EXIT_REPORT_WAIT_S)
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(asyncio.shield(self._stderr_task), EXIT_REPORT_WAIT_S)
        if failure is not None and self.process.returncode is None:
            self.process.kill()
        if self._stopped is None:
            code = self.process.returncode
            if failure is not None:
                how = failure
            elif code is None:
                how = "the threadkeeper server closed its output"
            elif code < 0:
                how = f"the threadkeeper server was killed by signal {-code}"
            else:
                how = f"the threadkeeper server exited with status {code}"
            stderr = self._stderr.text()
            message = f"{how}; its stderr ends with:\n{stderr}" if stderr else how
            self._stopped = ServerExitedError(message, code, stderr)
        self._fail_pending(self._stopped)
        if not self.closed.done():
            self.closed.set_result(self.process.returncode)

    def _fail_pending(self, error: BaseException) -> None:
        pending, self._pending = self._pending, {}
        for future in pending.values():
            if not future.done():
                future.set_exception(error)

    async def _write(self, frame: bytes) -> None:
        stdin = self.process.stdin
        assert stdin is not None
        # write() queues the whole frame at once, so frames never interleave; the lock only
        # keeps concurrent drain() calls apart.
        stdin.write(frame)
        async with self._write_lock:
            await stdin.drain()

    def _check_size(self, frame: bytes) -> None:
        # The server cannot read the id of a frame it refuses (it answers with id null), so
        # the call could never be matched: refuse it here with the error the server would give.
        size = len(frame) - frame.index(b"\r\n\r\n") - 4
        if self.max_frame_bytes is not None and size > self.max_frame_bytes:
            raise ThreadKeeperError(
                -32004,
                f"limit exceeded: maxFrameBytes is {self.max_frame_bytes}, got {size}",
                {"limit": "maxFrameBytes", "value": size, "max": self.max_frame_bytes},
            )

    async def request(self, method: str, params: Any = None, timeout: float | None = None) -> Any:
        """Sends a request and waits for its result; raises :class:`ThreadKeeperError`.

        With ``timeout`` (seconds), a call still unanswered then fails with
        :class:`RequestTimeoutError` and the server is sent ``$/cancelRequest`` for it.
        """
        if self._stopped is not None:
            raise self._stopped
        request_id = next(self._ids)
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        frame = encode(message)
        self._check_size(frame)
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Any] = loop.create_future()
        self._pending[request_id] = future
        # A timer handle rather than asyncio.wait_for: no extra task per call on the hot path.
        timer = None
        if timeout is not None and timeout != math.inf:
            timer = loop.call_later(timeout, self._expire, request_id, method, timeout)
        try:
            await self._write(frame)
        except (ConnectionError, RuntimeError):
            # The pipe broke: the reader task reports the exit (status, stderr) to this future.
            pass
        try:
            return await future
        except asyncio.CancelledError:
            # Tell the server, so a read-only request stops working; its answer (-32800) is dropped.
            if self._pending.pop(request_id, None) is not None and self._stopped is None:
                with contextlib.suppress(Exception):
                    await self.notify("$/cancelRequest", {"id": request_id})
            raise
        finally:
            if timer is not None:
                timer.cancel()

    def _expire(self, request_id: int, method: str, timeout: float) -> None:
        future = self._pending.pop(request_id, None)
        if future is None or future.done():
            return
        # Written now, not from a task: a request the caller sends next must not overtake it.
        stdin = self.process.stdin
        if self._stopped is None and stdin is not None:
            with contextlib.suppress(Exception):
                stdin.write(encode({"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": request_id}}))
        future.set_exception(RequestTimeoutError(method, timeout))

    async def notify(self, method: str, params: Any = None) -> None:
        if self._stopped is not None:
            raise self._stopped
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        with contextlib.suppress(ConnectionError, RuntimeError):
            await self._write(encode(message))

    async def close(self) -> int | None:
        """``shutdown``, ``exit``, then waits for the process (killing it if it lingers)."""
        if self._stopped is None:
            with contextlib.suppress(ThreadKeeperError):
                await self.request("shutdown")
                await self.notify("exit")
            if self._stopped is None:
                self._stopped = ServerExitedError("the client was closed", None, "")
            stdin = self.process.stdin
            if stdin is not None:
                with contextlib.suppress(Exception):
                    stdin.close()
        try:
            await asyncio.wait_for(asyncio.shield(self.process.wait()), CLOSE_TIMEOUT_S)
        except asyncio.TimeoutError:
            self.process.kill()
            await self.process.wait()
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(asyncio.shield(self._reader_task), CLOSE_TIMEOUT_S)
        return self.process.returncode

    def kill(self) -> None:
        """Ends the process at once (for when there is no loop time left for ``close``)."""
        if self.process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                self.process.kill()
