"""The blocking client: :class:`ThreadKeeper` and :class:`Thread`.

Each method is the asyncio client's, derived by :func:`_blocking` (one line per method): the
asyncio method's body runs unchanged over a blocking connection (``_blocking_connection``),
whose coroutines never suspend, so the call is stepped once to its end on the calling thread,
with no event loop. A method added to :class:`AsyncThread` or :class:`AsyncThreadKeeper` is
offered here by adding its line below.
"""

from __future__ import annotations

import asyncio
import inspect
import os
from collections.abc import Callable, Coroutine, Mapping, Sequence
from types import TracebackType
from typing import Any, Concatenate, ParamSpec, TypeVar

from ._blocking_connection import BlockingConnection
from .client import START_TIMEOUT_S, AsyncThread, AsyncThreadKeeper
from .discovery import find_binary
from .types import InitializeResult, ThreadInfo

P = ParamSpec("P")
R = TypeVar("R")


def run_now(coroutine: Coroutine[Any, Any, R]) -> R:
    """Steps a coroutine of the asyncio client over the blocking connection to its end."""
    try:
        coroutine.send(None)
    except StopIteration as done:
        result: R = done.value
        return result
    coroutine.close()
    raise RuntimeError("a blocking threadkeeper call awaited something that needs an event loop")


async def run_from_loop(coroutine: Coroutine[Any, Any, R]) -> R:
    """Runs a blocking call from the caller's own event loop without blocking the loop."""
    return await asyncio.get_running_loop().run_in_executor(None, run_now, coroutine)


def _named_after(method: Callable[..., Any], call: Callable[..., Any]) -> None:
    for name in ("__module__", "__name__", "__qualname__", "__doc__"):
        with_name = getattr(method, name, None)
        if with_name is not None:
            setattr(call, name, with_name)
    call.__qualname__ = call.__qualname__.replace("AsyncThreadKeeper.", "ThreadKeeper.").replace("AsyncThread.", "Thread.")
    call.__module__ = __name__
    call.__wrapped__ = method  # type: ignore[attr-defined]  # so help() and inspect.signature show its parameters


def _blocking(method: Callable[Concatenate[Any, P], Coroutine[Any, Any, R]]) -> Callable[Concatenate[Any, P], R]:
    """The blocking form of an asyncio client method: same parameters, same result."""

    def call(self: Thread | ThreadKeeper, /, *args: P.args, **kwargs: P.kwargs) -> R:
        return run_now(method(self._async, *args, **kwargs))

    _named_after(method, call)
    return call


def _blocking_thread(method: Callable[Concatenate[Any, P], Coroutine[Any, Any, AsyncThread]]) -> Callable[Concatenate[Any, P], Thread]:
    """The blocking form of a method that answers a thread: the blocking :class:`Thread`."""

    def call(self: Thread | ThreadKeeper, /, *args: P.args, **kwargs: P.kwargs) -> Thread:
        return Thread(run_now(method(self._async, *args, **kwargs)))

    _named_after(method, call)
    call.__signature__ = inspect.signature(method).replace(return_annotation="Thread")  # type: ignore[attr-defined]
    return call


class Thread:
    """One thread on the server (blocking). Obtained from ``open_thread()`` or ``import_thread()``.

    The methods are :class:`AsyncThread`'s, blocking; see there.
    """

    def __init__(self, thread: AsyncThread) -> None:
        #: The asyncio handle over the blocking connection, whose methods this one's run.
        self._async = thread
        self.id = thread.id

    @property
    def _thread(self) -> AsyncThread:
        return self._async

    def __repr__(self) -> str:
        return f"Thread(id={self.id!r}, version={self.info.version}, event_count={self.info.event_count})"

    @property
    def info(self) -> ThreadInfo:
        """The thread as it was when opened; ``version`` and ``event_count`` follow this handle's appends."""
        return self._async.info

    append = _blocking(AsyncThread.append)
    render = _blocking(AsyncThread.render)
    render_xml = _blocking(AsyncThread.render_xml)
    render_xml_delta = _blocking(AsyncThread.render_xml_delta)
    render_messages = _blocking(AsyncThread.render_messages)
    render_text = _blocking(AsyncThread.render_text)
    render_openai_chat = _blocking(AsyncThread.render_openai_chat)
    render_openai_responses = _blocking(AsyncThread.render_openai_responses)
    render_anthropic = _blocking(AsyncThread.render_anthropic)
    render_gemini = _blocking(AsyncThread.render_gemini)
    render_bedrock_converse = _blocking(AsyncThread.render_bedrock_converse)
    events = _blocking(AsyncThread.events)
    events_page = _blocking(AsyncThread.events_page)
    export = _blocking(AsyncThread.export)
    tokens = _blocking(AsyncThread.tokens)
    view = _blocking(AsyncThread.view)
    plan_compaction = _blocking(AsyncThread.plan_compaction)
    compact = _blocking(AsyncThread.compact)
    plan_rolling_compaction = _blocking(AsyncThread.plan_rolling_compaction)
    compact_rolling = _blocking(AsyncThread.compact_rolling)
    pop = _blocking(AsyncThread.pop)
    fork = _blocking_thread(AsyncThread.fork)
    prompt_cli = _blocking(AsyncThread.prompt_cli)
    close = _blocking(AsyncThread.close)
    delete = _blocking(AsyncThread.delete)
    clear = _blocking(AsyncThread.clear)
    to_langchain_messages = _blocking(AsyncThread.to_langchain_messages)
    append_langchain_messages = _blocking(AsyncThread.append_langchain_messages)


class ThreadKeeper:
    """A blocking connection to one threadkeeper server process.

    ``with ThreadKeeper.spawn(args=["--store", "memory"]) as tk: ...``

    The methods are :class:`AsyncThreadKeeper`'s, blocking; see there. Calls may come from
    several threads at once.
    """

    def __init__(self, client: AsyncThreadKeeper) -> None:
        #: The asyncio client over the blocking connection, whose methods this one's run.
        self._async = client

    @classmethod
    def spawn(
        cls,
        binary: str | os.PathLike[str] | None = None,
        args: Sequence[str] | None = None,
        env: Mapping[str, str] | None = None,
        cwd: str | os.PathLike[str] | None = None,
        client_info: Mapping[str, str] | None = None,
        timeout: float | None = None,
        start_timeout: float | None = START_TIMEOUT_S,
    ) -> ThreadKeeper:
        """Starts a server process and initializes it; see :meth:`AsyncThreadKeeper.spawn`.

        ``timeout`` is the default of every call (seconds; ``None`` waits as long as it takes);
        ``start_timeout`` bounds the wait for the answer to ``initialize``.
        """
        connection = BlockingConnection.start(find_binary(binary, env), list(args or []), env, cwd)
        return cls(run_now(AsyncThreadKeeper._initialize(connection, client_info, timeout, start_timeout)))

    def __enter__(self) -> ThreadKeeper:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.close()

    @property
    def server(self) -> InitializeResult:
        """The server's answer to ``initialize``."""
        return self._async.server

    @property
    def binary(self) -> str:
        return self._async.binary

    @property
    def pid(self) -> int:
        return self._async.pid

    @property
    def returncode(self) -> int | None:
        """The exit status once the process has ended (negative: killed by that signal)."""
        return self._async.returncode

    @property
    def timeout(self) -> float | None:
        """Seconds a call waits for its answer when it gives no ``timeout`` of its own (``None``: no limit)."""
        return self._async.timeout

    @timeout.setter
    def timeout(self, value: float | None) -> None:
        self._async.timeout = value

    request = _blocking(AsyncThreadKeeper.request)
    notify = _blocking(AsyncThreadKeeper.notify)
    wait_closed = _blocking(AsyncThreadKeeper.wait_closed)
    close = _blocking(AsyncThreadKeeper.close)
    open_thread = _blocking_thread(AsyncThreadKeeper.open_thread)
    list_threads = _blocking(AsyncThreadKeeper.list_threads)
    delete_thread = _blocking(AsyncThreadKeeper.delete_thread)
    search = _blocking(AsyncThreadKeeper.search)
    import_thread = _blocking_thread(AsyncThreadKeeper.import_thread)
    put_blob = _blocking(AsyncThreadKeeper.put_blob)
    get_blob = _blocking(AsyncThreadKeeper.get_blob)
    stat_blob = _blocking(AsyncThreadKeeper.stat_blob)
    escape_xml = _blocking(AsyncThreadKeeper.escape_xml)
    serialize_thread_to_xml = _blocking(AsyncThreadKeeper.serialize_thread_to_xml)
    parse_thread_xml = _blocking(AsyncThreadKeeper.parse_thread_xml)
    messages_to_xml = _blocking(AsyncThreadKeeper.messages_to_xml)
    messages_to_text = _blocking(AsyncThreadKeeper.messages_to_text)
    parse_tool_calls = _blocking(AsyncThreadKeeper.parse_tool_calls)
    stored_messages_to_events = _blocking(AsyncThreadKeeper.stored_messages_to_events)
    messages_to_events = _blocking(AsyncThreadKeeper.messages_to_events)
    responses_to_events = _blocking(AsyncThreadKeeper.responses_to_events)
    prompt_cli = _blocking(AsyncThreadKeeper.prompt_cli)
    parse_reply = _blocking(AsyncThreadKeeper.parse_reply)
    turn_to_yaml = _blocking(AsyncThreadKeeper.turn_to_yaml)
    turn_from_yaml = _blocking(AsyncThreadKeeper.turn_from_yaml)
    turn_to_json = _blocking(AsyncThreadKeeper.turn_to_json)
    turn_from_json = _blocking(AsyncThreadKeeper.turn_from_json)
    validate_turn = _blocking(AsyncThreadKeeper.validate_turn)
