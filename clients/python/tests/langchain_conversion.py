"""The ``messages`` format as LangChain's provider packages convert it, checked by each
provider's request types and sequencing rules."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_anthropic.chat_models import _format_messages
from langchain_core.messages import messages_from_dict
from langchain_openai.chat_models.base import _construct_responses_api_input, _convert_message_to_dict
from provider_rules import anthropic_problems, merge_consecutive_turns, openai_chat_problems, openai_responses_problems
from provider_types import ANTHROPIC, OPENAI_CHAT, validate_type


def langchain_problems(stored: Sequence[Any]) -> list[str]:
    """What each provider would refuse in ``stored`` once LangChain has converted it."""
    messages = messages_from_dict([dict(m) for m in stored])

    chat = [_convert_message_to_dict(m) for m in messages]
    validate_type(OPENAI_CHAT, chat)
    problems = [f"openai-chat: {p}" for p in openai_chat_problems(chat)]

    # Only the sequencing here: LangChain writes assistant turns as output messages without the
    # `id` and `status` the SDK's strict type asks for (the API accepts them).
    items = _construct_responses_api_input(messages)
    problems += [f"openai-responses: {p}" for p in openai_responses_problems(items)]

    system, formatted = _format_messages(messages, model=None)
    validate_type(ANTHROPIC, formatted)
    # LangChain leaves consecutive turns of one role apart; the API combines them.
    problems += [f"anthropic: {p}" for p in anthropic_problems(system, merge_consecutive_turns(formatted))]
    return problems
