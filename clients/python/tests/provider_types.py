"""The providers' own request types (from their SDKs), validated strictly with pydantic."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from anthropic.types import MessageParam, TextBlockParam
from openai.types.chat import ChatCompletionMessageParam, completion_create_params
from openai.types.responses import ResponseInputParam, response_create_params
from pydantic import ConfigDict, TypeAdapter

#: Strict: no coercion (a number is not a string); forbid: a key the type does not declare is an error.
STRICT = ConfigDict(strict=True, extra="forbid")
OPENAI_CHAT = TypeAdapter(list[ChatCompletionMessageParam], config=STRICT)
OPENAI_RESPONSES = TypeAdapter(ResponseInputParam, config=STRICT)
ANTHROPIC = TypeAdapter(list[MessageParam], config=STRICT)
#: Whole request bodies (with a model), where the prompt-cache fields live: ``prompt_cache_key``,
#: ``prompt_cache_options`` and the parts' ``prompt_cache_breakpoint`` (openai 3.x). A list of
#: one, since a TypedDict takes no config of its own.
OPENAI_CHAT_CREATE = TypeAdapter(list[completion_create_params.CompletionCreateParamsNonStreaming], config=STRICT)
OPENAI_RESPONSES_CREATE = TypeAdapter(list[response_create_params.ResponseCreateParamsNonStreaming], config=STRICT)
#: The request's top-level ``system``: a string, or text blocks (which carry cache breakpoints).
ANTHROPIC_SYSTEM = TypeAdapter(str | list[TextBlockParam], config=STRICT)


def validate_type(adapter: TypeAdapter[Any], value: Any) -> None:
    """Validates ``value`` against a provider type, iterables included.

    The SDK types declare lists as ``Iterable[...]``, which pydantic validates lazily: the
    validated value holds iterators whose items are checked only when consumed, so consume them.
    """
    _consume(adapter.validate_python(value))


def _consume(value: Any) -> None:
    if isinstance(value, dict):
        for item in value.values():
            _consume(item)
    elif isinstance(value, list):
        for item in value:
            _consume(item)
    elif isinstance(value, Iterator):
        for item in value:
            _consume(item)
