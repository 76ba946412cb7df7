"""An in-process Python port of the seed ``serializeThreadToXml`` (with the documented fixes:
compact JSON for non-string tool results, U+FFFD for characters XML forbids, unknown types as
compact JSON). The baseline of the client benchmark, and an independent oracle in tests.

JSON bodies use ``json.dumps`` with compact separators, which matches ``JSON.stringify`` for
strings, integers, booleans, null, lists and dicts (not for every float).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

_FORBIDDEN = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")
_ESCAPES = {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&apos;"}
_SPECIAL = re.compile("[&<>\"']")


def escape_xml(text: str) -> str:
    return _SPECIAL.sub(lambda m: _ESCAPES[m.group(0)], _FORBIDDEN.sub("\ufffd", text))


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _body(value: Any) -> str:
    return value if isinstance(value, str) else _json(value)


def serialize_thread_to_xml(events: Sequence[Mapping[str, Any]], response_prefix: str | None = None) -> str:
    tool_names: dict[str, str] = {}
    lines = ["<thread>"]
    for index, e in enumerate(events):
        kind = e["type"]
        it = escape_xml(str(e["iteration"]))
        if kind == "message":
            xml_type = {"user": "human", "assistant": "ai"}.get(e["role"], "system")
            attrs, body = f'type="{xml_type}" id="{index}" iteration="{it}"', e["content"]
        elif kind == "tool_call":
            tool_names[e["toolCallId"]] = e["toolName"]
            attrs, body = f'type="tool_input" id="{index}" name="{escape_xml(e["toolName"])}" iteration="{it}"', _json(e["args"])
        elif kind == "tool_result":
            name = escape_xml(tool_names.get(e["toolCallId"], "unknown"))
            attrs, body = f'type="tool_output" id="{index}" name="{name}" status="success" iteration="{it}"', _body(e["result"])
        elif kind == "error":
            recoverable = "true" if e["recoverable"] else "false"
            attrs, body = f'type="error" id="{index}" iteration="{it}" recoverable="{recoverable}"', e["error"]
        elif kind == "human_input_requested":
            attrs, body = f'type="human_input_requested" id="{index}" iteration="{it}"', e["question"]
        elif kind == "human_input_received":
            attrs, body = f'type="human_input_received" id="{index}" iteration="{it}"', e["response"]
        elif kind == "completion":
            attrs, body = f'type="completion" id="{index}" iteration="{it}"', e["result"]
        elif kind == "summary":
            joined = escape_xml(",".join(str(i) for i in e["summarizedIterations"]))
            attrs, body = f'type="summary" id="{index}" iteration="{it}" summarizedIterations="{joined}"', e["summary"]
        else:
            rest = {k: v for k, v in e.items() if k not in ("type", "iteration", "timestamp")}
            attrs, body = f'type="{escape_xml(kind)}" id="{index}" iteration="{it}"', _json(rest)
        lines.append(f"  <event {attrs}>{escape_xml(body)}</event>")
    lines.append("</thread>")
    xml = "\n".join(lines)
    return f"{xml}\n{response_prefix}" if response_prefix else xml
