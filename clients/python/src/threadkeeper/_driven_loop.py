"""The blocking client's event loop, run by the threads that call it.

A blocking call runs its coroutine with ``run_until_complete`` on the calling thread, so a call
crosses no thread: no handoff to a loop thread and back, which cost more than the call itself.
Calls from several threads at once share the loop: the first one drives it, the others hand
their coroutine to it and wait for either their answer or the driver to finish, whichever comes
first, and then one of them drives. Between calls nothing runs the loop; the server's output
waits in the pipe until the next call reads it.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


def _done_future() -> concurrent.futures.Future[None]:
    future: concurrent.futures.Future[None] = concurrent.futures.Future()
    future.set_result(None)
    return future


class CallerDrivenLoop:
    def __init__(self) -> None:
        #: Raised by calls made after ``stop()``.
        self.stopped_error: BaseException = RuntimeError("the threadkeeper client is closed")
        self.loop = asyncio.new_event_loop()
        self._state = threading.Lock()
        self._driving = False
        #: Completed when the current driver stops driving; followers wait on it and their answer.
        self._released = _done_future()
        self._helper: concurrent.futures.ThreadPoolExecutor | None = None

    def run(self, coroutine: Coroutine[Any, Any, T]) -> T:
        """Runs ``coroutine`` to completion on the loop and returns its result (blocking)."""
        if self.loop.is_closed():
            coroutine.close()
            raise self.stopped_error
        if asyncio._get_running_loop() is not None:
            # Called from async code: this thread cannot run a second loop, so a helper thread does.
            return self._helper_thread().submit(self.run, coroutine).result()
        if self._try_drive():
            try:
                return self.loop.run_until_complete(coroutine)
            finally:
                self._stop_driving()
        future = asyncio.run_coroutine_threadsafe(coroutine, self.loop)
        while True:
            with self._state:
                released = self._released
            waited: list[concurrent.futures.Future[Any]] = [future, released]
            concurrent.futures.wait(waited, return_when=concurrent.futures.FIRST_COMPLETED)
            if future.done():
                return future.result()
            if self._try_drive():
                try:
                    self.loop.run_until_complete(asyncio.wrap_future(future, loop=self.loop))
                except BaseException:
                    if not future.done():
                        raise
                finally:
                    self._stop_driving()
                return future.result()

    async def run_from_loop(self, coroutine: Coroutine[Any, Any, T]) -> T:
        """Runs ``coroutine`` from the caller's own event loop (async adapters of a blocking thread)."""
        return await asyncio.get_running_loop().run_in_executor(None, self.run, coroutine)

    def _try_drive(self) -> bool:
        with self._state:
            if self._driving:
                return False
            self._driving = True
            self._released = concurrent.futures.Future()
            return True

    def _stop_driving(self) -> None:
        with self._state:
            self._driving = False
            released = self._released
        released.set_result(None)

    def _helper_thread(self) -> concurrent.futures.ThreadPoolExecutor:
        with self._state:
            if self._helper is None:
                self._helper = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="threadkeeper-call")
            return self._helper

    def stop(self) -> None:
        """Cancels what is left on the loop and closes it."""
        if self.loop.is_closed():
            return
        if self._helper is not None:
            self._helper.shutdown(wait=True)
        pending = asyncio.all_tasks(self.loop)
        for task in pending:
            task.cancel()
        if pending and self._try_drive():
            try:
                with contextlib.suppress(BaseException):
                    self.loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
            finally:
                self._stop_driving()
        self.loop.close()
