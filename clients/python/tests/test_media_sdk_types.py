"""Media renders against the providers' own SDK types: the golden requests of the server's media
fixture (images, a PDF, audio and a text file in user messages and tool results, bytes
included), in standard and XML context mode, validate strictly with openai's and anthropic's
request types."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from conftest import repo_root
from provider_types import ANTHROPIC, ANTHROPIC_SYSTEM, OPENAI_CHAT, OPENAI_RESPONSES, validate_type


def golden(mode: str, form: str) -> Any:
    path: Path = repo_root() / "tests" / "golden" / "media" / f"media_parts.{mode}.{form}.json"
    return json.loads(path.read_text())


@pytest.mark.parametrize("mode", ["standard", "xml"])
def test_openai_chat_media_requests_are_chat_completions_messages(mode: str) -> None:
    body = golden(mode, "openai-chat")
    validate_type(OPENAI_CHAT, body["messages"])
    kinds = {part["type"] for m in body["messages"] if isinstance(m.get("content"), list) for part in m["content"]}
    assert {"image_url", "file", "input_audio"} <= kinds


@pytest.mark.parametrize("mode", ["standard", "xml"])
def test_openai_responses_media_requests_are_responses_input(mode: str) -> None:
    body = golden(mode, "openai-responses")
    validate_type(OPENAI_RESPONSES, body["input"])
    text = json.dumps(body["input"])
    assert '"input_image"' in text and '"input_file"' in text


@pytest.mark.parametrize("mode", ["standard", "xml"])
def test_anthropic_media_requests_are_message_params(mode: str) -> None:
    body = golden(mode, "anthropic")
    validate_type(ANTHROPIC, body["messages"])
    if "system" in body:
        validate_type(ANTHROPIC_SYSTEM, body["system"])
    text = json.dumps(body["messages"])
    assert '"type": "image"' in text and '"type": "document"' in text
