"""JSON-RPC 2.0 over a child process's stdio, with LSP framing.

The connection is the child process's asyncio protocol: the loop's read callback decodes the
output and matches responses to pending calls by id, and keeps the tail of the child's stderr
(reading it also keeps the child from blocking on a full pipe). When stdout ends, every pending call fails at once with a :class:`ServerExitedError` that carries the exit
status and the stderr tail, and so does every later call.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import math
import os
from collections import deque
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from ._framing import FrameDecoder, FramingError, cancel_frame, decode, message_frame
from .errors import RequestTimeoutError, ServerExitedError, ThreadKeeperError

STDERR_TAIL_BYTES = 8 * 1024
#: How long to wait, once stdout has ended, for the exit status and the last of stderr.
EXIT_REPORT_WAIT_S = 2.0
#: How long ``close()`` waits for the process before killing it.
CLOSE_TIMEOUT_S = 5.0


class StderrTail:
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


def check_frame_size(frame: bytes, max_frame_bytes: int | None) -> None:
    """Refuses a frame over the server's ``maxFrameBytes`` with the error the server would give:
    the server cannot read the id of a frame it refuses (it answers with id null), so the call
    could never be matched."""
    if max_frame_bytes is None or len(frame) <= max_frame_bytes:
        return
    size = len(frame) - frame.index(b"\r\n\r\n") - 4
    if size > max_frame_bytes:
        raise ThreadKeeperError(
            -32004,
            f"limit exceeded: maxFrameBytes is {max_frame_bytes}, got {size}",
            {"limit": "maxFrameBytes", "value": size, "max": max_frame_bytes},
        )


class Transport(Protocol):
    """What the client's methods need from a connection: the asyncio one (:class:`Connection`)
    or the blocking one, whose coroutines never suspend."""

    binary: str
    max_frame_bytes: int | None

    @property
    def stopped(self) -> ServerExitedError | None: ...

    @property
    def pid(self) -> int: ...

    @property
    def returncode(self) -> int | None: ...

    def lock(self) -> contextlib.AbstractAsyncContextManager[Any]: ...

    async def request(self, method: str, params: Any = None, timeout: float | None = None) -> Any: ...

    async def notify(self, method: str, params: Any = None) -> None: ...

    async def wait_closed(self) -> int | None: ...

    async def close(self) -> int | None: ...

    def kill(self) -> None: ...


class Connection(asyncio.SubprocessProtocol):
    """A running server process and the calls in flight to it.

    It is the process's asyncio protocol: output is decoded and answers are matched in the
    loop's own read callback, so an answer wakes its caller directly, with no reader task between.
    """

    def __init__(self, binary: str) -> None:
        self.binary = binary
        self.max_frame_bytes: int | None = None
        self._ids = itertools.count(1)
        self._pending: dict[int, asyncio.Future[Any]] = {}
        self._stderr = StderrTail()
        self._decoder = FrameDecoder()
        self._stopped: ServerExitedError | None = None
        loop = asyncio.get_running_loop()
        self._transport: asyncio.SubprocessTransport | None = None
        self._stdin: asyncio.WriteTransport | None = None
        self._exited: asyncio.Future[None] = loop.create_future()
        self._stderr_closed: asyncio.Future[None] = loop.create_future()
        #: Set while the stdin pipe is full; writers wait for it to drain.
        self._drained: asyncio.Future[None] | None = None
        self._exit_report: asyncio.Task[None] | None = None
        self.closed: asyncio.Future[int | None] = loop.create_future()

    @classmethod
    async def start(cls, binary: str, args: Sequence[str], env: Mapping[str, str] | None, cwd: str | os.PathLike[str] | None) -> Connection:
        connection = cls(binary)
        try:
            await asyncio.get_running_loop().subprocess_exec(
                lambda: connection,
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
        return connection

    @property
    def stopped(self) -> ServerExitedError | None:
        return self._stopped

    def lock(self) -> asyncio.Lock:
        """A lock for a handle's state shared by calls in flight at once."""
        return asyncio.Lock()

    async def wait_closed(self) -> int | None:
        """Waits until the server process has ended; returns its exit status."""
        return await self.closed

    @property
    def pid(self) -> int:
        assert self._transport is not None
        return self._transport.get_pid()

    @property
    def returncode(self) -> int | None:
        """The exit status once the process has ended (negative: killed by that signal)."""
        return self._transport.get_returncode() if self._transport is not None else None

    # The protocol's callbacks, run by the event loop.

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.SubprocessTransport)
        self._transport = transport
        stdin = transport.get_pipe_transport(0)
        assert isinstance(stdin, asyncio.WriteTransport)
        self._stdin = stdin

    def pipe_data_received(self, fd: int, data: bytes) -> None:
        if fd == 2:
            self._stderr.push(data)
            return
        if self._exit_report is not None:
            return  # the output was malformed: the process is being stopped
        try:
            for body in self._decoder.feed(data):
                self._dispatch(decode(body))
        except (FramingError, ValueError) as error:
            self._report_exit(f"the server sent a malformed message ({error})")

    def pipe_connection_lost(self, fd: int, exc: Exception | None) -> None:
        if fd == 1:
            self._report_exit(None)
        elif fd == 2 and not self._stderr_closed.done():
            self._stderr_closed.set_result(None)

    def process_exited(self) -> None:
        if not self._exited.done():
            self._exited.set_result(None)

    def pause_writing(self) -> None:
        if self._drained is None:
            self._drained = asyncio.get_running_loop().create_future()

    def resume_writing(self) -> None:
        drained, self._drained = self._drained, None
        if drained is not None and not drained.done():
            drained.set_result(None)

    def _report_exit(self, failure: str | None) -> None:
        if self._exit_report is None:
            self._exit_report = asyncio.ensure_future(self._on_exit(failure))

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
            await asyncio.wait_for(asyncio.shield(self._exited), EXIT_REPORT_WAIT_S)
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(asyncio.shield(self._stderr_closed), EXIT_REPORT_WAIT_S)
        if failure is not None and self.returncode is None:
            self.kill()
        if self._stopped is None:
            self._stopped = ServerExitedError.describe(failure, self.returncode, self._stderr.text())
        self._fail_pending(self._stopped)
        if self._transport is not None and self.returncode is not None:
            self._transport.close()  # its pipes are done; nothing else will close it
        if not self.closed.done():
            self.closed.set_result(self.returncode)

    def _fail_pending(self, error: BaseException) -> None:
        pending, self._pending = self._pending, {}
        for future in pending.values():
            if not future.done():
                future.set_exception(error)

    async def _write(self, frame: bytes) -> None:
        stdin = self._stdin
        assert stdin is not None
        # write() queues the whole frame at once, so frames never interleave; a full pipe makes
        # every writer wait until it drains.
        stdin.write(frame)
        while self._drained is not None:
            await asyncio.shield(self._drained)

    async def request(self, method: str, params: Any = None, timeout: float | None = None) -> Any:
        """Sends a request and waits for its result; raises :class:`ThreadKeeperError`.

        With ``timeout`` (seconds), a call still unanswered then fails with
        :class:`RequestTimeoutError` and the server is sent ``$/cancelRequest`` for it.
        """
        if self._stopped is not None:
            raise self._stopped
        request_id = next(self._ids)
        frame = message_frame(method, params, request_id)
        check_frame_size(frame, self.max_frame_bytes)
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
        stdin = self._stdin
        if self._stopped is None and stdin is not None:
            with contextlib.suppress(Exception):
                stdin.write(cancel_frame(request_id))
        future.set_exception(RequestTimeoutError(method, timeout))

    async def notify(self, method: str, params: Any = None) -> None:
        if self._stopped is not None:
            raise self._stopped
        with contextlib.suppress(ConnectionError, RuntimeError):
            await self._write(message_frame(method, params))

    async def close(self) -> int | None:
        """``shutdown``, ``exit``, then waits for the process (killing it if it lingers)."""
        if self._stopped is None:
            with contextlib.suppress(ThreadKeeperError):
                await self.request("shutdown")
                await self.notify("exit")
            if self._stopped is None:
                self._stopped = ServerExitedError("the client was closed", None, "")
            if self._stdin is not None:
                with contextlib.suppress(Exception):
                    self._stdin.close()
        try:
            await asyncio.wait_for(asyncio.shield(self._exited), CLOSE_TIMEOUT_S)
        except asyncio.TimeoutError:
            self.kill()
            await self._exited
        if self._exit_report is not None:
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(asyncio.shield(self._exit_report), CLOSE_TIMEOUT_S)
        if self._transport is not None:
            self._transport.close()
        return self.returncode

    def kill(self) -> None:
        """Ends the process at once (for when there is no loop time left for ``close``)."""
        if self._transport is not None and self.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                self._transport.kill()
