"""Client for the threadkeeper sidecar: keep agent threads and render them as XML or LangChain messages."""

from .client import AsyncThread, AsyncThreadKeeper
from .discovery import find_binary
from .errors import BinaryNotFoundError, ErrorCode, ServerExitedError, ThreadKeeperError
from .langchain import stored_to_langchain_messages
from .sync import Thread, ThreadKeeper
from .types import (
    AgentEvent,
    AnyAgentEvent,
    AppendResult,
    Block,
    EventsPage,
    ParsedToolCalls,
    StoredMessage,
    ThreadInfo,
    ThreadSettings,
    Turn,
    TurnRead,
    TurnValidation,
    XmlDelta,
)

__all__ = [
    "AgentEvent",
    "AnyAgentEvent",
    "AppendResult",
    "AsyncThread",
    "AsyncThreadKeeper",
    "BinaryNotFoundError",
    "Block",
    "ErrorCode",
    "EventsPage",
    "ParsedToolCalls",
    "ServerExitedError",
    "StoredMessage",
    "Thread",
    "ThreadInfo",
    "ThreadKeeper",
    "ThreadKeeperError",
    "ThreadSettings",
    "Turn",
    "TurnRead",
    "TurnValidation",
    "XmlDelta",
    "find_binary",
    "stored_to_langchain_messages",
]
