"""JSON-RPC 2.0 over a child process's stdio with blocking reads and writes: no event loop.

A call writes its frame and then reads the server's output itself on the calling thread, so a
small call costs what the pipe costs plus the JSON. Calls from several threads at once share the
output: one of them reads (the reader) and hands each answer to its caller; when the reader's own
answer has come it stops reading and a waiting caller takes over. Between calls nothing reads
stdout; the server's answers wait in the pipe. A thread drains stderr, keeping its tail, so the
server never blocks on a full stderr pipe while a call waits for it.

Where a pipe cannot be polled (Windows), a call could not bound its read by its timeout, so a
thread reads the output instead and every call waits for its answer.

Its methods are coroutines that never suspend, so the asyncio client's method bodies run on it
unchanged: the blocking client steps each one once (see ``sync``).
"""

from __future__ import annotations

import contextlib
import itertools
import math
import os
import select
import subprocess
import threading
import time
import weakref
from collections.abc import Mapping, Sequence
from typing import Any

from ._connection import CLOSE_TIMEOUT_S, EXIT_REPORT_WAIT_S, StderrTail, check_frame_size
from ._framing import FrameDecoder, FramingError, cancel_frame, decode, message_frame
from .errors import RequestTimeoutError, ServerExitedError, ThreadKeeperError

READ_BYTES = 65536
#: Whether a caller can read the output itself: its timeout needs the pipe polled.
READS_ON_CALLER = hasattr(select, "poll")


class _Call:
    """One call in flight, and its answer once the reader has handed it over."""

    __slots__ = ("request_id", "done", "result", "error")

    def __init__(self, request_id: int) -> None:
        self.request_id = request_id
        self.done = False
        self.result: Any = None
        self.error: BaseException | None = None


class BlockingConnection:
    """A running server process and the calls in flight to it, for blocking callers."""

    def __init__(self, binary: str, process: subprocess.Popen[bytes]) -> None:
        assert process.stdin is not None and process.stdout is not None and process.stderr is not None
        self.binary = binary
        self.max_frame_bytes: int | None = None
        self._process = process
        self._stdin_fd = process.stdin.fileno()
        self._stdout_fd = process.stdout.fileno()
        self._ids = itertools.count(1)
        self._decoder = FrameDecoder()
        self._stderr = StderrTail()
        #: Guards ``_pending``, ``_reading`` and ``_stopped``; callers waiting for the reader wait on ``_turn``.
        self._state = threading.Lock()
        self._turn = threading.Condition(self._state)
        self._waiting = 0
        self._reading = False
        self._pending: dict[int, _Call] = {}
        self._stopped: ServerExitedError | None = None
        #: Frames are written whole, one at a time.
        self._write_lock = threading.Lock()
        # The drain holds the tail, not the connection, so a connection dropped without close()
        # is collected: that closes the server's stdin, the server exits, and the drain ends.
        self._stderr_reader = threading.Thread(
            target=_drain_stderr, args=(process.stderr.fileno(), self._stderr), name="threadkeeper-stderr", daemon=True
        )
        self._stderr_reader.start()
        weakref.finalize(self, process.stdin.close)
        if READS_ON_CALLER:
            #: Used by the reader alone, when its call has a deadline (poll, unlike select, takes any fd).
            self._readable = select.poll()
            self._readable.register(self._stdout_fd, select.POLLIN)
        else:
            self._reading = True  # for good: this thread is the reader
            threading.Thread(target=self._read_forever, name="threadkeeper-reader", daemon=True).start()

    @classmethod
    def start(cls, binary: str, args: Sequence[str], env: Mapping[str, str] | None, cwd: str | os.PathLike[str] | None) -> BlockingConnection:
        try:
            process = subprocess.Popen(
                [binary, *args],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=dict(env) if env is not None else None,
                cwd=cwd,
                bufsize=0,
            )
        except OSError as error:
            raise ServerExitedError(f"could not run {binary}: {error}", None, "") from error
        return cls(binary, process)

    @property
    def stopped(self) -> ServerExitedError | None:
        return self._stopped

    @property
    def pid(self) -> int:
        return self._process.pid

    @property
    def returncode(self) -> int | None:
        """The exit status once the process has ended (negative: killed by that signal)."""
        return self._process.poll()

    def lock(self) -> contextlib.AbstractAsyncContextManager[None]:
        """A lock for a handle's state shared by calls from several threads."""
        return _ThreadLock()

    # Calls.

    async def request(self, method: str, params: Any = None, timeout: float | None = None) -> Any:
        """Sends a request and waits for its result (blocking); raises :class:`ThreadKeeperError`."""
        return self.call(method, params, timeout)

    async def notify(self, method: str, params: Any = None) -> None:
        if self._stopped is not None:
            raise self._stopped
        with contextlib.suppress(OSError):
            self._write(message_frame(method, params))

    def call(self, method: str, params: Any, timeout: float | None) -> Any:
        if self._stopped is not None:
            raise self._stopped
        request_id = next(self._ids)
        frame = message_frame(method, params, request_id)
        check_frame_size(frame, self.max_frame_bytes)
        deadline = None if timeout is None or timeout == math.inf else time.monotonic() + timeout
        call = _Call(request_id)
        with self._state:
            if self._stopped is not None:
                raise self._stopped
            self._pending[request_id] = call
            # Nobody reads the output: this caller does, from the moment its frame is written.
            reads = not self._reading
            self._reading = True
        try:
            try:
                self._write(frame)
            except OSError:
                pass  # the pipe broke: reading reports the exit (status, stderr) to this call
            if not (self._read_for(call, deadline) if reads else self._await_answer(call, deadline)):
                self._cancel(request_id)
                assert timeout is not None
                raise RequestTimeoutError(method, timeout)
        except BaseException:
            # Interrupted (or timed out): tell the server, so a read-only request stops working; its answer is dropped.
            with self._state:
                unanswered = self._pending.pop(request_id, None) is not None
            if unanswered:
                self._cancel(request_id)
            raise
        if call.error is not None:
            raise call.error
        return call.result

    def _cancel(self, request_id: int) -> None:
        if self._stopped is None:
            with contextlib.suppress(OSError):
                self._write(cancel_frame(request_id))

    def _write(self, frame: bytes) -> None:
        with self._write_lock:
            written = os.write(self._stdin_fd, frame)
            if written < len(frame):  # a frame larger than the pipe takes several writes
                view = memoryview(frame)[written:]
                while view:
                    view = view[os.write(self._stdin_fd, view) :]

    def _await_answer(self, call: _Call, deadline: float | None) -> bool:
        """Waits while another caller reads, until it hands over ``call``'s answer (True) or stops
        reading (then this caller reads), or the deadline passes (False; the call is no longer pending)."""
        with self._state:
            # Counted before ``done`` is looked at: the reader sets ``done`` without the lock and
            # then notifies if anyone is counted, so an answer is never missed.
            self._waiting += 1
            try:
                while not call.done:
                    if not self._reading:
                        self._reading = True
                        break
                    remaining = None if deadline is None else deadline - time.monotonic()
                    if remaining is not None and remaining <= 0:
                        if self._forget(call):
                            return False
                        remaining = None  # the reader has taken its answer and is handing it over
                    self._turn.wait(remaining)
                else:
                    return True
            finally:
                self._waiting -= 1
        return self._read_for(call, deadline)

    def _read_for(self, call: _Call, deadline: float | None) -> bool:
        """Reads for ``call`` (this caller is the reader), then lets a waiting caller read."""
        try:
            return self._read_until(call, deadline)
        finally:
            with self._state:
                self._reading = False
                if self._waiting:
                    self._turn.notify_all()

    def _forget(self, call: _Call) -> bool:
        """Drops a call that timed out (under ``_state``); False when its answer came just now."""
        return self._pending.pop(call.request_id, None) is not None

    def _read_until(self, call: _Call, deadline: float | None) -> bool:
        """Reads and hands out answers until ``call`` has its own (True) or the deadline passes (False)."""
        while not call.done:
            if deadline is not None:
                remaining = deadline - time.monotonic()
                if remaining <= 0 or not self._readable.poll(math.ceil(remaining * 1000)):
                    with self._state:
                        if call.done or not self._forget(call):
                            return True
                    return False
            if not self._read_once():
                return True
        return True

    def _read_once(self) -> bool:
        """Reads what the server wrote and hands out the answers; False once the output has ended."""
        data = os.read(self._stdout_fd, READ_BYTES)
        if not data:
            self._report_exit(None)
            return False
        try:
            messages = [decode(body) for body in self._decoder.feed(data)]
        except (FramingError, ValueError) as error:
            self._report_exit(f"the server sent a malformed message ({error})")
            return False
        if messages:
            self._dispatch(messages)
        return True

    def _read_forever(self) -> None:
        """The reader thread, where a caller cannot read for itself."""
        try:
            while self._read_once():
                pass
        except OSError:
            self._report_exit(None)

    def _dispatch(self, messages: list[Any]) -> None:
        # Only the reader takes calls out of ``_pending`` as answered, so no lock is needed for
        # that (a waiting caller gives up its call under the lock, and one of the two gets it).
        for message in messages:
            for item in message if isinstance(message, list) else (message,):
                if not isinstance(item, dict) or "method" in item:
                    continue  # the server sends no requests or notifications in protocol v1
                request_id = item.get("id")
                call = self._pending.pop(request_id, None) if type(request_id) is int else None
                if call is None:
                    continue  # a call that timed out or was interrupted
                if "error" in item:
                    error = item["error"]
                    call.error = ThreadKeeperError(int(error.get("code", 0)), str(error.get("message", "")), error.get("data"))
                else:
                    call.result = item.get("result")
                call.done = True
        if self._waiting:
            with self._state:
                self._turn.notify_all()

    # The end of the process.

    def _report_exit(self, failure: str | None) -> None:
        """The output ended (or was malformed): every pending and later call fails with the exit
        status and the stderr tail."""
        if failure is not None:
            self.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self._process.wait(EXIT_REPORT_WAIT_S)
        self._stderr_reader.join(EXIT_REPORT_WAIT_S)
        exited = ServerExitedError.describe(failure, self.returncode, self._stderr.text())
        with self._state:
            if self._stopped is None:
                self._stopped = exited
            stopped = self._stopped
            pending, self._pending = self._pending, {}
            for call in pending.values():
                call.error = stopped
                call.done = True
            self._turn.notify_all()

    async def close(self) -> int | None:
        """``shutdown``, ``exit``, then waits for the process (killing it if it lingers)."""
        if self._stopped is None:
            with contextlib.suppress(ThreadKeeperError):
                self.call("shutdown", None, CLOSE_TIMEOUT_S)
                await self.notify("exit")
            with self._state:
                if self._stopped is None:
                    self._stopped = ServerExitedError("the client was closed", None, "")
        with contextlib.suppress(OSError):
            self._process.stdin.close()  # type: ignore[union-attr]
        try:
            self._process.wait(CLOSE_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            self.kill()
            self._process.wait()
        self._stderr_reader.join(CLOSE_TIMEOUT_S)
        for pipe in (self._process.stdout, self._process.stderr):
            with contextlib.suppress(OSError):
                pipe.close()  # type: ignore[union-attr]
        return self.returncode

    async def wait_closed(self) -> int | None:
        """Waits until the server process has ended; returns its exit status."""
        return self._process.wait()

    def kill(self) -> None:
        """Ends the process at once."""
        if self._process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                self._process.kill()


def _drain_stderr(fd: int, tail: StderrTail) -> None:
    with contextlib.suppress(OSError):
        while chunk := os.read(fd, READ_BYTES):
            tail.push(chunk)


class _ThreadLock(contextlib.AbstractAsyncContextManager[None]):
    """A ``threading.Lock`` behind the async context manager protocol: acquiring it blocks."""

    def __init__(self) -> None:
        self._lock = threading.Lock()

    async def __aenter__(self) -> None:
        self._lock.acquire()

    async def __aexit__(self, *exc_info: object) -> None:
        self._lock.release()
