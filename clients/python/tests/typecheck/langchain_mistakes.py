"""Mistakes with the LangChain adapters (needs ``langchain-core``), each of which must fail type
checking; as in ``mistakes.py``, each carries the ignore of the error mypy reports. Never executed."""

from __future__ import annotations

from threadkeeper import ThreadKeeper
from threadkeeper.chat_history import ThreadChatMessageHistory


def history(tk: ThreadKeeper) -> None:
    thread = tk.open_thread()
    ThreadChatMessageHistory(thread, context_mode="xml", instructions="Be brief.")  # right: type-checks
    # 1. a misspelled render option
    ThreadChatMessageHistory(thread, context_mod="xml")  # type: ignore[call-arg]
    # 2. a render option of another format (the budget belongs to render, not to the messages read)
    ThreadChatMessageHistory(thread, budget={"maxTokens": 100})  # type: ignore[call-arg]
    # 3. a context mode that does not exist
    ThreadChatMessageHistory(thread, context_mode="json")  # type: ignore[arg-type]
