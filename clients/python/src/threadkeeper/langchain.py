"""Conversion between LangChain message objects and their stored form (needs ``langchain-core``).

Imported lazily by the clients, so the package works without ``langchain-core``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, cast

from .types import StoredMessage

if TYPE_CHECKING:
    from langchain_core.messages import BaseMessage


INSTALL_HINT = "install it with `pip install 'threadkeeper-sidecar[langchain]'` (or `pip install langchain-core`)."


def stored_to_langchain_messages(messages: Sequence[StoredMessage]) -> list[BaseMessage]:
    """``langchain_core.messages.messages_from_dict`` of the stored messages, with a clear error
    when ``langchain-core`` is not installed."""
    try:
        from langchain_core.messages import messages_from_dict
    except ImportError as error:
        raise ImportError(f"to_langchain_messages needs langchain-core: {INSTALL_HINT}") from error
    dicts: list[dict[str, Any]] = [dict(m) for m in messages]
    return messages_from_dict(dicts)


def langchain_to_stored_messages(messages: Sequence[BaseMessage]) -> list[StoredMessage]:
    """``langchain_core.messages.messages_to_dict``: every field of each message (ids, tool calls,
    a tool message's ``status``, ...) in the stored form the server's ``messages/toEvents`` reads."""
    try:
        from langchain_core.messages import messages_to_dict
    except ImportError as error:
        raise ImportError(f"messages_to_events needs langchain-core: {INSTALL_HINT}") from error
    stored: list[StoredMessage] = [cast(StoredMessage, m) for m in messages_to_dict(messages)]
    return stored
