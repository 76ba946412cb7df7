from __future__ import annotations

import json
import re
from typing import Any

import pytest
from bench.reference_serializer import serialize_thread_to_xml as reference_xml
from conftest import SAMPLE_XML, assert_subset, loop_events, repo_root, sample_events

from threadkeeper import AsyncThreadKeeper, ErrorCode, ThreadKeeperError


async def test_escape_xml(tk: AsyncThreadKeeper) -> None:
    assert await tk.escape_xml("a & b < c > d \"e\" 'f'") == "a &amp; b &lt; c &gt; d &quot;e&quot; &apos;f&apos;"
    assert await tk.escape_xml("\x00\x08\x0b\x0c\x1b[31m\ufffe\uffff") == "\ufffd" * 5 + "[31m" + "\ufffd" * 2
    assert await tk.escape_xml("tab\tnl\ncr\r é 😀") == "tab\tnl\ncr\r é 😀"
    assert await tk.escape_xml("") == ""


async def test_serialize_thread_to_xml(tk: AsyncThreadKeeper) -> None:
    assert await tk.serialize_thread_to_xml(sample_events()) == SAMPLE_XML
    assert await tk.serialize_thread_to_xml([]) == "<thread>\n</thread>"
    assert await tk.serialize_thread_to_xml(sample_events(), response_prefix="Now:") == SAMPLE_XML + "\nNow:"
    assert await tk.serialize_thread_to_xml(sample_events(), response_prefix="") == SAMPLE_XML
    minimal = await tk.serialize_thread_to_xml(sample_events(), escape="minimal")
    assert minimal.split("\n")[2] == '  <event type="tool_input" id="1" name="calculator" iteration="1">{"expression":"2+2"}</event>'


async def test_serialize_every_event_type(tk: AsyncThreadKeeper) -> None:
    events: list[dict[str, Any]] = [
        {"type": "message", "role": "system", "content": "sys", "iteration": 0},
        {"type": "tool_result", "toolCallId": "missing", "result": {"a": [1, 1.5, 1e21, 1.0]}, "iteration": 0},
        {"type": "error", "error": "boom", "recoverable": False, "iteration": 1},
        {"type": "human_input_requested", "question": "OK?", "iteration": 1},
        {"type": "human_input_received", "response": "yes", "iteration": 1},
        {"type": "summary", "summarizedIterations": [0, 1], "summary": "sum", "iteration": 2},
        {"type": "approval", "iteration": 2, "decision": "ok", "timestamp": 9},
    ]
    expected = "\n".join(
        [
            "<thread>",
            '  <event type="system" id="0" iteration="0">sys</event>',
            # JSON.stringify number formatting, whatever Python sent (1.0 and 1e+21 here).
            '  <event type="tool_output" id="1" name="unknown" status="success" iteration="0">{&quot;a&quot;:[1,1.5,1e+21,1]}</event>',
            '  <event type="error" id="2" iteration="1" recoverable="false">boom</event>',
            '  <event type="human_input_requested" id="3" iteration="1">OK?</event>',
            '  <event type="human_input_received" id="4" iteration="1">yes</event>',
            '  <event type="summary" id="5" iteration="2" summarizedIterations="0,1">sum</event>',
            '  <event type="approval" id="6" iteration="2">{&quot;decision&quot;:&quot;ok&quot;}</event>',
            "</thread>",
        ]
    )
    assert await tk.serialize_thread_to_xml(events) == expected


async def test_serialize_agrees_with_the_in_process_reference(tk: AsyncThreadKeeper) -> None:
    events = loop_events(400)
    assert await tk.serialize_thread_to_xml(events, response_prefix="Next") == reference_xml(events, "Next")


async def test_invalid_params_name_the_field(tk: AsyncThreadKeeper) -> None:
    with pytest.raises(ThreadKeeperError) as info:
        await tk.serialize_thread_to_xml([{"type": "tool_result", "iteration": 0}])
    assert info.value.code == ErrorCode.INVALID_PARAMS
    assert info.value.data["path"] == "events[0].toolCallId"
    for params in ({"text": 5}, {}, {"text": "x", "extra": True}):
        with pytest.raises(ThreadKeeperError) as info:
            await tk.request("xml/escape", params)
        assert info.value.code == ErrorCode.INVALID_PARAMS


MESSAGES: list[Any] = [
    {"type": "system", "data": {"content": "Be brief"}},
    {"type": "human", "data": {"content": "Hi <b>"}},
    {"type": "ai", "data": {"content": "", "tool_calls": [{"id": "c1", "name": "calc", "args": {"x": 1}, "type": "tool_call"}]}},
    {"type": "tool", "data": {"content": "2", "tool_call_id": "c1"}},
]


async def test_messages_to_text(tk: AsyncThreadKeeper) -> None:
    two = [{"type": "human", "data": {"content": "First"}}, {"type": "human", "data": {"content": "Second"}}]
    assert await tk.messages_to_text(two) == "[User]\nFirst\n\n[User]\nSecond"  # type: ignore[arg-type]
    mixed = [{"type": "system", "data": {"content": "S"}}, {"type": "ai", "data": {"content": "A"}}, {"type": "tool", "data": {"content": "T", "tool_call_id": "c"}}]
    assert await tk.messages_to_text(mixed) == "[System]\nS\n\n[Assistant]\nA\n\n[Tool Result]\nT"  # type: ignore[arg-type]


async def test_messages_to_xml(tk: AsyncThreadKeeper) -> None:
    assert await tk.messages_to_xml(MESSAGES) == "\n".join(
        [
            "<thread>",
            '  <event type="system" id="0" iteration="0">Be brief</event>',
            '  <event type="human" id="1" iteration="0">Hi &lt;b&gt;</event>',
            '  <event type="tool_input" id="2" name="calc" call_id="c1" iteration="0">{&quot;x&quot;:1}</event>',
            '  <event type="tool_output" id="3" name="calc" call_id="c1" status="success" iteration="0">2</event>',
            "</thread>",
        ]
    )
    # A lone pre-serialized thread comes back byte for byte.
    assert await tk.messages_to_xml([{"type": "human", "data": {"content": SAMPLE_XML}}]) == SAMPLE_XML
    # Behind a system message its events are spliced in, ids renumbered (not escaped into one event).
    renumbered = [re.sub(r' id="(\d+)"', lambda m: f' id="{int(m.group(1)) + 1}"', line, count=1) for line in SAMPLE_XML.split("\n")[1:-1]]
    spliced = await tk.messages_to_xml([{"type": "system", "data": {"content": "S"}}, {"type": "human", "data": {"content": "  " + SAMPLE_XML}}])
    assert spliced == "\n".join(["<thread>", '  <event type="system" id="0" iteration="0">S</event>', *renumbered, "</thread>"])


async def test_parse_tool_calls(tk: AsyncThreadKeeper) -> None:
    text = 'Let me compute.\n```json\n{"tool_calls": [{"name": "calc", "args": {"x": 1}}, {"name": "now", "id": "t9"}]}\n```'
    parsed = await tk.parse_tool_calls(text)
    assert parsed["toolCalls"] == [{"id": "call_0", "name": "calc", "args": {"x": 1}}, {"id": "t9", "name": "now", "args": {}}]
    assert parsed["content"] == "Let me compute."
    # The text before and after the fence, each trimmed, joined by a blank line.
    both = await tk.parse_tool_calls('  Before.\n```json\n{"tool_calls": [{"name": "calc"}]}\n```\n  After.  ')
    assert both == {"toolCalls": [{"id": "call_0", "name": "calc", "args": {}}], "content": "Before.\n\nAfter."}
    # No tool_calls array, or an entry without a string name: no calls, the whole text trimmed.
    no_array = '\n```json\n{"calls": []}\n```\n'
    assert await tk.parse_tool_calls(no_array) == {"toolCalls": [], "content": no_array.strip()}
    no_name = '```json\n{"tool_calls": [{"args": {}}]}\n```'
    assert await tk.parse_tool_calls(no_name) == {"toolCalls": [], "content": no_name}
    broken = "```json\n{not json}\n```"
    assert await tk.parse_tool_calls(broken) == {"toolCalls": [], "content": broken}
    assert await tk.parse_tool_calls("plain answer") == {"toolCalls": [], "content": "plain answer"}


async def test_parse_thread_xml(tk: AsyncThreadKeeper) -> None:
    events = await tk.parse_thread_xml(SAMPLE_XML)
    assert len(events) == 5
    assert_subset(events[0], {"type": "message", "role": "user", "content": "What is 2+2?", "iteration": 0})
    assert_subset(events[1], {"type": "tool_call", "toolName": "calculator", "args": {"expression": "2+2"}, "iteration": 1})
    assert_subset(events[2], {"type": "tool_result", "result": "4", "iteration": 1})
    assert_subset(events[3], {"type": "message", "role": "assistant", "content": "The answer is 4.", "iteration": 1})
    assert_subset(events[4], {"type": "completion", "result": "The answer is 4.", "iteration": 1})
    # The XML has no call ids: the result is paired with its call by whatever id the parser picks.
    assert events[2]["toolCallId"] == events[1]["toolCallId"]
    assert all("timestamp" not in e for e in events), "timestamps are not in the XML"
    assert await tk.serialize_thread_to_xml(events) == SAMPLE_XML
    with pytest.raises(ThreadKeeperError) as info:
        await tk.parse_thread_xml("<thread><event")
    assert info.value.code == ErrorCode.INVALID_PARAMS


async def test_render_messages_standard(tk: AsyncThreadKeeper) -> None:
    thread = await tk.open_thread()
    await thread.append(sample_events())
    rendered = await thread.render("messages")
    assert (rendered["contextMode"], rendered["version"]) == ("standard", 1)
    assert rendered["messages"] == (
        [
            {"type": "human", "data": {"content": "What is 2+2?"}},
            {"type": "ai", "data": {"content": "", "tool_calls": [{"id": "c1", "name": "calculator", "args": {"expression": "2+2"}, "type": "tool_call"}]}},
            {"type": "tool", "data": {"content": "4", "tool_call_id": "c1"}},
            {"type": "ai", "data": {"content": "The answer is 4."}},
        ]
    )


async def test_render_messages_system_and_prefixes(tk: AsyncThreadKeeper) -> None:
    thread = await tk.open_thread(settings={"instructions": "Be brief."})
    await thread.append(
        [
            {"type": "summary", "summarizedIterations": [0, 1], "summary": "Did things.", "iteration": 2},
            {"type": "message", "role": "system", "content": "note", "iteration": 2},
            {"type": "human_input_received", "response": "yes", "iteration": 2},
            {"type": "error", "error": "bad", "recoverable": True, "iteration": 2},
            {"type": "error", "error": "worse", "recoverable": False, "iteration": 2},
        ]
    )
    assert await thread.render_messages() == (
        [
            {"type": "system", "data": {"content": "## Previous Iteration Summaries\n\n### Iteration(s) 0, 1\nDid things.\n\n\n\nBe brief."}},
            {"type": "human", "data": {"content": "[System]: note"}},
            {"type": "human", "data": {"content": "[Human Response]: yes"}},
            {"type": "human", "data": {"content": "[Error (recoverable)]: bad"}},
            {"type": "human", "data": {"content": "[Error]: worse"}},
        ]
    )


async def test_render_messages_xml_mode(tk: AsyncThreadKeeper) -> None:
    thread = await tk.open_thread(settings={"contextMode": "xml", "instructions": "Be brief.", "responsePrefix": "Go:"})
    await thread.append(sample_events())
    rendered = await thread.render("messages")
    assert rendered["contextMode"] == "xml"
    assert rendered["messages"] == [{"type": "system", "data": {"content": "Be brief."}}, {"type": "human", "data": {"content": SAMPLE_XML + "\nGo:"}}]
    # The option overrides the setting; completion events give no message.
    assert await thread.render_messages(context_mode="standard") == [
        {"type": "system", "data": {"content": "Be brief."}},
        {"type": "human", "data": {"content": "What is 2+2?"}},
        {"type": "ai", "data": {"content": "", "tool_calls": [{"id": "c1", "name": "calculator", "args": {"expression": "2+2"}, "type": "tool_call"}]}},
        {"type": "tool", "data": {"content": "4", "tool_call_id": "c1"}},
        {"type": "ai", "data": {"content": "The answer is 4."}},
    ]


async def test_render_text(tk: AsyncThreadKeeper) -> None:
    thread = await tk.open_thread()
    await thread.append([{"type": "message", "role": "user", "content": "First", "iteration": 0}, {"type": "message", "role": "assistant", "content": "Second", "iteration": 0}])
    assert await thread.render_text() == "[User]\nFirst\n\n[Assistant]\nSecond"
    assert await thread.render_text() == await tk.messages_to_text(await thread.render_messages())


TURN: Any = {
    "id": "turn_tools",
    "blocks": [
        {"kind": "user", "role": "user", "payload": {"text": "Search golang"}},
        {"kind": "tool_call", "payload": {"id": "fc_1", "name": "search", "args": {"q": "golang"}}},
        {"kind": "tool_use", "payload": {"id": "fc_1", "result": {"hits": 10}}},
        {"kind": "llm_text", "role": "assistant", "payload": {"text": "Found 10."}},
    ],
}


async def test_turn_round_trips(tk: AsyncThreadKeeper) -> None:
    yaml = await tk.turn_to_yaml(TURN)
    assert "kind: tool_call" in yaml
    read = await tk.turn_from_yaml(yaml)
    assert read["warnings"] == []
    assert_subset(read["turn"]["blocks"], TURN["blocks"])
    text = await tk.turn_to_json(TURN)
    assert json.loads(text)["id"] == "turn_tools"
    assert_subset((await tk.turn_from_json(text))["turn"]["blocks"], TURN["blocks"])


async def test_validate_turn(tk: AsyncThreadKeeper) -> None:
    assert await tk.validate_turn(TURN) == {"valid": True, "problems": []}
    # Seed 004: a tool_call needs id and name; missing fields are problems only in strict mode.
    bad: Any = {"blocks": [{"kind": "tool_call", "payload": {"args": {}}}]}
    assert (await tk.validate_turn(bad))["valid"] is True
    result = await tk.validate_turn(bad, strict=True)
    assert result["valid"] is False
    assert [p["path"] for p in result["problems"]] == ["blocks[0].payload.id", "blocks[0].payload.name"]
    assert all(isinstance(p["message"], str) and p["message"] for p in result["problems"])


async def test_export_import(tk: AsyncThreadKeeper) -> None:
    thread = await tk.open_thread(settings={"instructions": "Be brief."}, metadata={"user": "ann"})
    await thread.append(sample_events())
    for fmt in ("yaml", "json"):
        text = await thread.export(fmt)  # type: ignore[arg-type]
        imported = await tk.import_thread(text, fmt, thread_id=f"{thread.id}-{fmt}")  # type: ignore[arg-type]
        assert imported.id == f"{thread.id}-{fmt}"
        assert await imported.events() == await thread.events()
        assert (imported.info.settings, imported.info.metadata) == ({"instructions": "Be brief."}, {"user": "ann"})
        assert await imported.render_xml() == await thread.render_xml()


async def test_import_without_thread_id_uses_the_exported_id(tk: AsyncThreadKeeper) -> None:
    thread = await tk.open_thread()
    await thread.append(sample_events())
    text = await thread.export("json")
    with pytest.raises(ThreadKeeperError) as info:
        await tk.import_thread(text, "json")
    assert info.value.code == ErrorCode.THREAD_EXISTS, "an existing thread is not replaced"
    events = await thread.events()
    await thread.delete()
    restored = await tk.import_thread(text, "json")
    assert restored.id == thread.id
    assert await restored.events() == events


@pytest.mark.parametrize(
    ("fmt", "file"),
    [("claude-code", "claude-code/agent-history-forked-2.0.75.jsonl"), ("codex", "codex/agent-history-compaction-0.77.0.jsonl")],
)
async def test_agent_host_sessions_import_as_threads(tk: AsyncThreadKeeper, fmt: Any, file: str) -> None:
    text = (repo_root() / "tests" / "fixtures" / "host-sessions" / file).read_text(encoding="utf-8")
    imported = await tk.import_thread(text, fmt, thread_id=f"host-{fmt}", branches=False)
    assert imported.id == f"host-{fmt}" and imported.info.event_count > 0
    assert (await imported.render_openai_chat())["messages"]
    with pytest.raises(ThreadKeeperError) as info:
        await tk.import_thread('{"type":"user"}\nnot json\n', fmt)
    assert info.value.code == ErrorCode.INVALID_PARAMS
