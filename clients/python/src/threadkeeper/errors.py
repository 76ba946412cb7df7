"""Errors: those the server answers with, and those about the server process."""

from __future__ import annotations

from typing import Any


class ErrorCode:
    """Error codes of protocol v1 (negative: sent by the server) and of this client (positive)."""

    PARSE_ERROR = -32700
    INVALID_REQUEST = -32600
    METHOD_NOT_FOUND = -32601
    INVALID_PARAMS = -32602
    INTERNAL_ERROR = -32603
    NOT_INITIALIZED = -32002
    CANCELLED = -32800
    THREAD_NOT_FOUND = -32001
    VERSION_CONFLICT = -32003
    LIMIT_EXCEEDED = -32004
    STORE_FAILED = -32005
    THREAD_EXISTS = -32006
    #: Client side: the server process ended (or never started) while a call needed it.
    SERVER_EXITED = 1
    #: Client side: no server binary could be found.
    BINARY_NOT_FOUND = 2
    #: Client side: a call got no answer within its timeout (the client sent ``$/cancelRequest``).
    TIMEOUT = 3


class ThreadKeeperError(Exception):
    """An error answered by the server (``code``, ``message``, ``data`` as on the wire)."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data

    def __repr__(self) -> str:
        return f"{type(self).__name__}(code={self.code}, message={self.message!r}, data={self.data!r})"


class ServerExitedError(ThreadKeeperError):
    """The server process ended: every pending and later call fails with this."""

    def __init__(self, message: str, exit_code: int | None, stderr: str) -> None:
        super().__init__(ErrorCode.SERVER_EXITED, message, {"exitCode": exit_code, "stderr": stderr})
        #: The exit status; negative for a signal (``-9`` after SIGKILL), as asyncio reports it.
        self.exit_code = exit_code
        #: The last part of what the server wrote to stderr.
        self.stderr = stderr

    @classmethod
    def describe(cls, failure: str | None, exit_code: int | None, stderr: str) -> ServerExitedError:
        """The error for a server whose output ended: ``failure`` when the client gave up on it,
        else how the process ended, then the tail of its stderr."""
        if failure is not None:
            how = failure
        elif exit_code is None:
            how = "the threadkeeper server closed its output"
        elif exit_code < 0:
            how = f"the threadkeeper server was killed by signal {-exit_code}"
        else:
            how = f"the threadkeeper server exited with status {exit_code}"
        message = f"{how}; its stderr ends with:\n{stderr}" if stderr else how
        return cls(message, exit_code, stderr)


class BinaryNotFoundError(ThreadKeeperError):
    """No server binary was found; the message says where we looked and how to build one."""

    def __init__(self, message: str, searched: list[str]) -> None:
        super().__init__(ErrorCode.BINARY_NOT_FOUND, message, {"searched": searched})
        self.searched = searched


class RequestTimeoutError(ThreadKeeperError, TimeoutError):
    """A call got no answer within its timeout. The client sent ``$/cancelRequest`` for it, so a
    read-only request stops on the server; a request that changes state may still complete there
    (its answer is dropped)."""

    def __init__(self, method: str, timeout: float) -> None:
        super().__init__(ErrorCode.TIMEOUT, f"{method}: no answer within {timeout:g} s", {"method": method, "timeout": timeout})
        self.method = method
        self.timeout = timeout
