"""Items the TypeScript Agents SDK's session kept in its own camelCase form (earlier versions of
the TypeScript ``ThreadSession`` did), read as the Responses API's wire items the Python SDK holds.

The mapping is the TypeScript SDK's own request conversion (what its OpenAI model sends for the
item), as the TypeScript client's ``toWireItem`` writes it, for the kinds those earlier versions
converted for the model input (messages, function calls and results, reasoning) and hosted
tools' calls; other kinds (computer, shell, apply-patch calls) are left as they are.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

_FAKE_ID = "FAKE_ID"

#: Item types only the TypeScript SDK's form has.
_SDK_ONLY_TYPES = frozenset({"function_call_result", "hosted_tool_call", "computer_call_result", "unknown", "tool_search_call", "tool_search_output", "program", "program_output"})


def is_sdk_form(item: Mapping[str, Any]) -> bool:
    """Whether a kept item is in the TypeScript SDK's form. A wire item never has ``callId`` or
    ``providerData``, nor one of that SDK's own item types; its reasoning items have a summary, its
    images and files name their source by the wire's fields."""
    if "callId" in item or "providerData" in item:
        return True
    kind = item.get("type")
    if kind in _SDK_ONLY_TYPES or (kind == "reasoning" and "summary" not in item):
        return True
    content = item.get("content")
    return isinstance(content, list) and any(isinstance(part, Mapping) and _is_sdk_part(part) for part in content)


def _is_sdk_part(part: Mapping[str, Any]) -> bool:
    """A content part in that SDK's form: ``providerData``, an image's ``image``, a file's ``file``.
    (Output text without ``annotations`` is that SDK's form too, but an item this SDK was given may
    have it: such an item reads as it is.)"""
    if "providerData" in part:
        return True
    return (part.get("type") == "input_image" and "image" in part) or (part.get("type") == "input_file" and "file" in part)


def _snake_key(key: str) -> str:
    return re.sub(r"([A-Z])", r"_\1", key).lower()


def _snake_cased(value: Any) -> Any:
    """Object keys in snake_case, recursively (lists as they are), as that SDK sends ``providerData``."""
    if isinstance(value, list):
        return list(value)
    if not isinstance(value, Mapping):
        return value
    return {_snake_key(key): _snake_cased(entry) for key, entry in value.items()}


def _spread(provider_data: Any, reserved: tuple[str, ...]) -> dict[str, Any]:
    snake = _snake_cased(provider_data)
    if not isinstance(snake, Mapping):
        return {}
    skip = {_snake_key(key) for key in reserved}
    return {key: value for key, value in snake.items() if key not in skip}


#: A field the item does not have (`undefined` in the TypeScript SDK), left out of the wire item.
_MISSING: Any = object()


def _defined(item: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in item.items() if value is not _MISSING}


def _input_part(part: Mapping[str, Any]) -> dict[str, Any]:
    extra = _spread(part.get("providerData"), ("type", "text", "detail", "image_url", "file_id", "file_data", "file_url", "filename"))
    kind = part.get("type")
    if kind == "input_text":
        return {"type": "input_text", "text": part.get("text"), **extra}
    if kind == "input_image":
        image = part.get("image")
        source = {"image_url": image} if isinstance(image, str) else {"file_id": image["id"]} if isinstance(image, Mapping) and "id" in image else {}
        return {"type": "input_image", "detail": part.get("detail") or "auto", **source, **extra}
    if kind == "input_file":
        file = part.get("file")
        if isinstance(file, str):
            source = {"file_url": file.strip()} if file.strip().startswith("https://") else {"file_data": file.strip()}
        elif isinstance(file, Mapping):
            source = {"file_id": file["id"]} if "id" in file else {"file_url": file.get("url")}
        else:
            source = {}
        return _defined({"type": "input_file", **source, "filename": part.get("filename", _MISSING), **extra})
    return dict(part)


def _output_part(part: Mapping[str, Any]) -> dict[str, Any]:
    provider_data = part.get("providerData")
    if part.get("type") == "output_text":
        annotations = provider_data.get("annotations") if isinstance(provider_data, Mapping) else None
        return {"type": "output_text", "text": part.get("text"), "annotations": annotations if isinstance(annotations, list) else [], **_spread(provider_data, ("type", "text", "annotations"))}
    if part.get("type") == "refusal":
        return {"type": "refusal", "refusal": part.get("refusal"), **_spread(provider_data, ("type", "refusal"))}
    return dict(part)


def _output_item_part(part: Mapping[str, Any]) -> dict[str, Any]:
    """A structured tool output part as the wire's (no default ``detail``, unlike a message's image)."""
    kind = part.get("type")
    if kind == "input_text":
        return {"type": "input_text", "text": part.get("text")}
    if kind == "input_image":
        image = part.get("image", part.get("imageUrl"))
        source = {"image_url": image} if isinstance(image, str) else {"file_id": image["id"]} if isinstance(image, Mapping) and isinstance(image.get("id"), str) else {}
        return _defined({"type": "input_image", **source, "detail": part.get("detail") or _MISSING})
    if kind == "input_file":
        file = part.get("file")
        if isinstance(file, str):
            source = {"file_url": file.strip()} if re.match(r"https?://", file.strip()) else {"file_data": file.strip()}
        elif isinstance(file, Mapping):
            source = {"file_id": file["id"]} if isinstance(file.get("id"), str) else {"file_url": file.get("url")}
        else:
            source = {}
        return _defined({"type": "input_file", **source, "filename": part.get("filename") or _MISSING})
    return dict(part)


def _function_output(output: Any) -> Any:
    if isinstance(output, str):
        return output
    if isinstance(output, list):
        return [_output_item_part(part) for part in output]
    if isinstance(output, Mapping) and output.get("type") == "text" and isinstance(output.get("text"), str):
        return output["text"]
    return str(output)


def _without_fake_id(item: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in item.items() if not (key == "id" and value == _FAKE_ID)}


def _hosted_wire_item(item: Mapping[str, Any]) -> dict[str, Any]:
    """A hosted tool's call: its ``providerData`` is the wire item, named by its type."""
    data = item.get("providerData")
    provider: Mapping[str, Any] = data if isinstance(data, Mapping) else {}
    name = str(provider.get("type") or item.get("name"))
    wire_type = name if name.endswith("_call") or name.startswith("mcp_") else f"{name}_call"
    base = {**_snake_cased(provider), "type": wire_type}
    status = item.get("status")
    if wire_type == "mcp_list_tools":
        return _defined({**base, "id": item.get("id", _MISSING)})
    if wire_type in ("mcp_approval_request", "mcp_call"):
        return _defined({**base, "id": provider.get("id", item.get("id", _MISSING))})
    if wire_type == "mcp_approval_response":
        return _defined({**base, "id": provider.get("id", _MISSING)})
    fields = {**base, "id": item.get("id", _MISSING), "status": "failed" if status is None else status}
    if wire_type == "file_search_call":
        fields["queries"] = provider.get("queries") or []
    elif wire_type == "code_interpreter_call":
        fields.update(code=provider.get("code") or "", outputs=provider.get("outputs", provider.get("results")) or [])
    elif wire_type == "image_generation_call":
        result = provider.get("result", item.get("output"))
        fields["result"] = result
    return _defined(fields)


def wire_item(item: Mapping[str, Any]) -> dict[str, Any]:
    """A TypeScript SDK item as its wire item (kinds without a conversion: as they are)."""
    data = item.get("providerData")
    kind = item.get("type") or ("message" if isinstance(item.get("role"), str) else None)
    role = item.get("role")
    if kind == "message" and role in ("system", "user"):
        content = item.get("content")
        parts = content if isinstance(content, str) or role == "system" else [_input_part(part) for part in content or []]
        return _defined({"id": item.get("id", _MISSING), "role": role, "content": parts, **_spread(data, ("id", "role", "content", "phase"))})
    if kind == "message" and role == "assistant":
        phase = item.get("phase", data.get("phase", _MISSING) if isinstance(data, Mapping) else _MISSING)
        return _without_fake_id(
            _defined(
                {
                    "type": "message",
                    "id": item.get("id", _MISSING),
                    "role": "assistant",
                    "content": [_output_part(part) for part in item.get("content") or []],
                    "status": item.get("status", _MISSING),
                    "phase": phase,
                    **_spread(data, ("type", "id", "role", "content", "status", "phase")),
                }
            )
        )
    if kind == "function_call":
        fields = {"id": item.get("id", _MISSING), "type": "function_call", "name": item.get("name", _MISSING), "call_id": item.get("callId", _MISSING), "arguments": item.get("arguments", _MISSING), "status": item.get("status", _MISSING)}
        return _without_fake_id(_defined({**fields, **_spread(data, ("id", "type", "name", "call_id", "arguments", "status", "namespace", "caller"))}))
    if kind == "function_call_result":
        fields = {"type": "function_call_output", "id": item.get("id", _MISSING), "call_id": item.get("callId", _MISSING), "output": _function_output(item.get("output")), "status": item.get("status", _MISSING)}
        return _defined({**fields, **_spread(data, ("type", "id", "call_id", "output", "status", "namespace", "caller"))})
    if kind == "reasoning":
        encrypted = data.get("encryptedContent", data.get("encrypted_content")) if isinstance(data, Mapping) else None
        summary = [{"type": "summary_text", "text": part.get("text"), **_spread(part.get("providerData"), ("type", "text"))} for part in item.get("content") or []]
        return _defined({"id": item.get("id", _MISSING), "type": "reasoning", "summary": summary, "encrypted_content": encrypted if isinstance(encrypted, str) else _MISSING, **_spread(data, ("id", "type", "summary", "encrypted_content"))})
    if kind == "hosted_tool_call":
        return _hosted_wire_item(item)
    if kind == "compaction":
        return _defined({"type": "compaction", "id": item.get("id", _MISSING), "encrypted_content": item.get("encrypted_content", item.get("encryptedContent", _MISSING))})
    if kind == "unknown":
        return _defined({**_snake_cased(data), "id": item.get("id", _MISSING)})
    return dict(item)
