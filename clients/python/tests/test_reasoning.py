"""Reasoning given back to the provider that produced it, and the gemini and bedrock-converse
renders, against the real server; the bodies validated offline with google-genai's ``Content``
types and botocore's Converse input shape (the ``test-providers`` extra)."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest

from conftest import repo_root
from threadkeeper import AsyncThreadKeeper, ReasoningEvent



def golden_events(name: str) -> list[Any]:
    path = repo_root() / "tests" / "golden" / "providers" / f"{name}.events.json"
    events: list[Any] = json.loads(path.read_text())["events"]
    return events


async def thread_of(tk: AsyncThreadKeeper, name: str) -> Any:
    thread = await tk.open_thread(settings={"instructions": "Be brief."})
    await thread.append(golden_events(name))
    return thread


def validate_gemini(request: dict[str, Any]) -> None:
    genai_types = pytest.importorskip("google.genai.types")
    for content in request["contents"]:
        parsed = genai_types.Content.model_validate(content)
        assert parsed.model_dump(mode="json", by_alias=True, exclude_none=True) == content
    if "systemInstruction" in request:
        genai_types.Content.model_validate(request["systemInstruction"])


def validate_converse(request: dict[str, Any]) -> None:
    botocore_session = pytest.importorskip("botocore.session")
    from botocore.validate import ParamValidator

    model = botocore_session.get_session().get_service_model("bedrock-runtime")
    shape = model.operation_model("Converse").input_shape
    report = ParamValidator().validate({"modelId": "us.anthropic.claude-sonnet-4-5-20250929-v1:0", **request}, shape)
    assert not report.has_errors(), report.generate_report()


async def test_reasoning_events_are_kept_byte_for_byte(tk: AsyncThreadKeeper) -> None:
    thread = await tk.open_thread()
    event: ReasoningEvent = {"type": "reasoning", "iteration": 0, "provider": "anthropic", "text": "", "signature": "sig"}
    await thread.append([{"type": "message", "role": "user", "content": "hi", "iteration": 0}, event])
    assert (await thread.events())[1] == event


async def test_anthropic_turns_open_with_their_own_thinking(tk: AsyncThreadKeeper) -> None:
    thread = await thread_of(tk, "thinking_tool_loop")
    request = await thread.render_anthropic()
    assistant = [m for m in request["messages"] if m["role"] == "assistant"]
    assert [sum(b["type"].endswith("thinking") for b in m["content"]) for m in assistant] == [2, 2, 1]
    assert all(m["content"][0]["type"].endswith("thinking") for m in assistant)
    text = json.dumps(request)
    assert "CiQBGeminiSigAAA" not in text and "gAAAAABopenai" not in text
    anthropic_types = pytest.importorskip("anthropic.types")
    from pydantic import TypeAdapter

    TypeAdapter(list[anthropic_types.MessageParam]).validate_python(request["messages"])


async def test_render_gemini_is_a_valid_generate_content_body(tk: AsyncThreadKeeper) -> None:
    thread = await thread_of(tk, "gemini_parallel_calls")
    request = await thread.render_gemini()
    validate_gemini(dict(request))
    model_steps = [c for c in request["contents"] if c["role"] == "model" and any("functionCall" in p for p in c["parts"])]
    first_calls = [next(p for p in c["parts"] if "functionCall" in p) for c in model_steps]
    assert [p.get("thoughtSignature") for p in first_calls] == ["CiQBjz1rX0sig1AA", "CiQBjz1rX0sig2AA", "CiQBjz1rX0sig3AA"]
    loop = await thread_of(tk, "thinking_tool_loop")
    signed = await loop.render_gemini(thought_signature_placeholder="none")
    validate_gemini(dict(signed))
    assert "skip_thought_signature_validator" not in json.dumps(signed)
    assert "skip_thought_signature_validator" in json.dumps(await loop.render_gemini())


async def test_render_bedrock_converse_is_a_valid_converse_input(tk: AsyncThreadKeeper) -> None:
    thread = await thread_of(tk, "bedrock_thinking_tool_loop")
    request = await thread.render_bedrock_converse(cache_control="auto")
    roles = [m["role"] for m in request["messages"]]
    assert roles == ["user", "assistant"] * (len(roles) // 2) + ["user"] * (len(roles) % 2)
    signatures = [
        b["reasoningContent"]["reasoningText"]["signature"]
        for m in request["messages"]
        for b in m["content"]
        if "reasoningText" in b.get("reasoningContent", {})
    ]
    assert signatures == ["EqQBCkYIBxgCKkBsig1", "EqQBCkYIBxgCKkBsig2", "EqQBCkYIBxgCKkBsig3", "EqQBCkYIBxgCKkBsig4"]
    decoded = await thread.render_bedrock_converse(boto3=True)
    validate_converse(dict(decoded))
    blobs = [b["reasoningContent"]["redactedContent"] for m in decoded["messages"] for b in m["content"] if "redactedContent" in b.get("reasoningContent", {})]
    assert blobs == [base64.b64decode(golden_events("bedrock_thinking_tool_loop")[8]["redactedData"])]
    validate_converse(dict(request))


def png_base64(width: int, height: int) -> str:
    """A PNG header saying ``width``×``height`` (what the server reads of an image)."""
    header = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR" + width.to_bytes(4, "big") + height.to_bytes(4, "big")
    return base64.b64encode(header + bytes([8, 6, 0, 0, 0, 0, 0, 0, 0])).decode()


async def test_media_threads_render_valid_gemini_and_converse_bodies(tk: AsyncThreadKeeper) -> None:
    thread = await tk.open_thread(settings={"instructions": "Look closely."})
    image = {"type": "image", "data": png_base64(64, 48), "mediaType": "image/png"}
    pdf = {"type": "file", "data": base64.b64encode(b"%PDF-1.4 tiny").decode(), "mediaType": "application/pdf", "filename": "report v2.pdf"}
    events: list[Any] = [
        {"type": "message", "role": "user", "content": [{"type": "text", "text": "What is this?"}, image, pdf], "iteration": 0},
        {"type": "tool_call", "toolName": "screenshot", "toolCallId": "shot_1", "args": {}, "iteration": 1},
        {"type": "tool_result", "toolCallId": "shot_1", "result": "taken", "content": [image], "iteration": 1},
    ]
    await thread.append(events)
    gemini = await thread.render_gemini()
    validate_gemini(dict(gemini))
    assert [list(p) for p in gemini["contents"][-1]["parts"]] == [["functionResponse"], ["inlineData"]]
    converse = await thread.render_bedrock_converse(boto3=True)
    validate_converse(dict(converse))
    blocks = converse["messages"][0]["content"]
    assert blocks[1]["image"]["format"] == "png" and isinstance(blocks[1]["image"]["source"]["bytes"], bytes)
    assert blocks[2]["document"]["name"] == "report v2"
    validate_converse(dict(await thread.render_bedrock_converse(cache_control="auto", boto3=True)))
