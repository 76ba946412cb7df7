"""Conversion of stored messages to LangChain message objects (needs ``langchain-core``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from .types import StoredMessage

if TYPE_CHECKING:
    from langchain_core.messages import BaseMessage


def stored_to_langchain_messages(messages: Sequence[StoredMessage]) -> list[BaseMessage]:
    """``langchain_core.messages.messages_from_dict`` of the stored messages, with a clear error
    when ``langchain-core`` is not installed."""
    try:
        from langchain_core.messages import messages_from_dict
    except ImportError as error:
        raise ImportError(
            "to_langchain_messages needs langchain-core: install it with `pip install 'threadkeeper[langchain]'` "
            "(or `pip install langchain-core`)."
        ) from error
    dicts: list[dict[str, Any]] = [dict(m) for m in messages]
    return messages_from_dict(dicts)
