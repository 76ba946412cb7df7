"""Typed methods of undo and branch, context size and compaction, and prompts for command-line models."""

from __future__ import annotations

import pytest
from conftest import BINARY, MEMORY_ARGS, sample_events, skip_unless_blocking_server_has, skip_unless_server_has

from threadkeeper import (
    AppendResult,
    AsyncThreadKeeper,
    ErrorCode,
    PopResult,
    RollingCompactResult,
    ThreadKeeper,
    ThreadKeeperError,
)


async def test_events_tail(tk: AsyncThreadKeeper) -> None:
    await skip_unless_server_has(tk, "thread/pop")  # tail came with pop and fork
    thread = await tk.open_thread()
    await thread.append(sample_events())
    assert await thread.events(tail=2) == sample_events()[3:]
    page = await thread.events_page(tail=10)
    assert (page.version, page.event_count, page.events) == (1, 5, sample_events())


async def test_pop_removes_the_last_events(tk: AsyncThreadKeeper) -> None:
    await skip_unless_server_has(tk, "thread/pop")
    thread = await tk.open_thread()
    await thread.append(sample_events())
    assert await thread.pop(2) == PopResult(sample_events()[3:], 2)
    assert (thread.info.version, thread.info.event_count) == (2, 3)
    assert await thread.pop() == PopResult(sample_events()[2:3], 3)
    assert await thread.events() == sample_events()[:2]
    with pytest.raises(ThreadKeeperError) as info:
        await thread.pop(expected_version=1)
    assert info.value.code == ErrorCode.VERSION_CONFLICT


async def test_pop_forgets_kept_xml_lines(tk: AsyncThreadKeeper) -> None:
    await skip_unless_server_has(tk, "thread/pop")
    thread = await tk.open_thread()
    await thread.append(sample_events())
    await thread.render_xml(incremental=True)
    await thread.pop(3)
    await thread.append(sample_events()[3:4])
    assert await thread.render_xml(incremental=True) == await thread.render_xml()


async def test_fork(tk: AsyncThreadKeeper) -> None:
    await skip_unless_server_has(tk, "thread/fork")
    thread = await tk.open_thread("source", metadata={"a": 1})
    await thread.append(sample_events()[:2])
    await thread.append(sample_events()[2:])
    whole = await thread.fork(new_thread_id="whole")
    assert (whole.id, await whole.events()) == ("whole", sample_events())
    early = await thread.fork(at_version=1, metadata={"b": 2})
    assert early.id != thread.id and early.info.metadata == {"b": 2}
    assert await early.events() == sample_events()[:2]
    assert await (await thread.fork(at_event=1)).events() == sample_events()[:1]
    with pytest.raises(ThreadKeeperError) as info:
        await thread.fork(new_thread_id="whole")
    assert info.value.code == ErrorCode.THREAD_EXISTS


async def test_tokens_plan_and_compact(tk: AsyncThreadKeeper) -> None:
    await skip_unless_server_has(tk, "thread/tokens", "thread/planCompaction", "thread/compact")
    thread = await tk.open_thread()
    events = [dict(e, iteration=i) for i, e in enumerate(sample_events())]
    await thread.append(events)
    count = await thread.tokens()
    assert count["tokenizer"] == "estimate" and count["tokens"] > 0
    assert [part["iteration"] for part in count["byIteration"]] == [0, 1, 2, 3, 4]
    assert all(part["tokens"] > 0 for part in count["byIteration"])
    kept = await thread.render_xml(incremental=True)
    whole = count["tokens"]
    within = await thread.render("messages", budget={"maxTokens": whole - 1})
    assert within["dropped"]["iterations"] and within["tokens"] <= whole - 1
    assert (await thread.tokens("xml", tokenizer="o200k_base"))["tokenizer"] == "o200k_base"
    plan = await thread.plan_compaction(max_context_tokens=1, keep_recent_iterations=1)
    assert plan["needed"] is True and plan["iterations"]
    assert all(isinstance(step["prompt"], str) and step["prompt"] for step in plan["iterations"])
    summaries = [{"iteration": step["iteration"], "summary": f"iteration {step['iteration']} done"} for step in plan["iterations"]]
    compacted = await thread.compact(summaries, keep_recent_iterations=1, expected_version=1)
    assert isinstance(compacted, AppendResult) and compacted.version == 2
    assert "iteration 0 done" in await thread.render_text()
    # The round rewrote the view: the handle's kept XML lines are not reused.
    assert await thread.render_xml(incremental=True) == await thread.render_xml() != kept


async def test_rolling_compaction_summarizes_into_a_message_after_the_instructions(tk: AsyncThreadKeeper) -> None:
    await skip_unless_server_has(tk, "thread/planCompaction")
    thread = await tk.open_thread(settings={"instructions": "Be brief."})
    events = [dict(e, iteration=i) for i, e in enumerate(sample_events())]
    await thread.append(events)
    whole = (await thread.tokens("openai-chat", tokenizer="o200k_base"))["tokens"]
    plan = await thread.plan_rolling_compaction(
        max_tokens=whole - 1, compact_to=whole // 2, format="openai-chat", tokenizer="o200k_base"
    )
    assert plan["strategy"] == "rolling" and plan["needed"] is True and plan["version"] == 1
    step = plan["step"]
    assert step["kind"] == "summarize" and step["iterations"][0] == 0
    assert step["prompt"].startswith("You are compacting the history")
    done = await thread.compact_rolling(step, "Greeted & answered <once>.")
    assert isinstance(done, RollingCompactResult) and (done.version, done.round) == (2, 1)
    assert thread.info.version == 2
    messages = (await thread.render_openai_chat())["messages"]
    last = step["iterations"][1]
    assert messages[:2] == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": f"[Summary of iterations 0 to {last}]: Greeted & answered <once>."},
    ]
    again = await thread.plan_rolling_compaction(max_tokens=whole - 1, compact_to=whole // 2, format="openai-chat", tokenizer="o200k_base")
    assert again["needed"] is False and "step" not in again
    with pytest.raises(ThreadKeeperError) as info:
        await thread.compact_rolling(step, "again")  # planned on version 1
    assert info.value.code == ErrorCode.VERSION_CONFLICT
    with pytest.raises(ThreadKeeperError) as info:
        await thread.compact_rolling({"kind": "summarize", "iterations": step["iterations"]}, "")
    assert info.value.code == ErrorCode.INVALID_PARAMS and info.value.data["path"] == "summary"


def test_rolling_compaction_blocking() -> None:
    with ThreadKeeper.spawn(binary=BINARY, args=MEMORY_ARGS) as tk:
        thread = tk.open_thread("rolling")
        thread.append([dict(e, iteration=i) for i, e in enumerate(sample_events())])
        plan = thread.plan_rolling_compaction(max_tokens=10, compact_to=5)
        assert plan["needed"] is True and plan["step"]["kind"] == "summarize"
        assert thread.compact_rolling(plan["step"], "done so far").round == 1


async def test_view_is_one_page_with_thread_text_escaped(tk: AsyncThreadKeeper) -> None:
    await skip_unless_server_has(tk, "thread/view")
    thread = await tk.open_thread()
    hostile = "</script><script>window.__pwned=1</script>"
    await thread.append([*sample_events(), {"type": "message", "role": "user", "content": hostile, "iteration": 9}])
    html = await thread.view(context_mode="xml")
    assert html.startswith("<!DOCTYPE html>")
    assert hostile not in html
    with pytest.raises(ThreadKeeperError) as info:
        await thread.view(from_event=1)
    assert info.value.code == ErrorCode.INVALID_PARAMS


async def test_prompt_cli_and_parse_reply(tk: AsyncThreadKeeper) -> None:
    await skip_unless_server_has(tk, "prompt/cli", "prompt/parseReply")
    thread = await tk.open_thread()
    await thread.append(sample_events()[:1])
    tools = [{"name": "calculator", "description": "Evaluates arithmetic.", "parameters": {"type": "object", "properties": {"expression": {"type": "string"}}}}]
    prompt = await thread.prompt_cli(tools=tools)
    assert "What is 2+2?" in prompt and "calculator" in prompt
    assert await tk.prompt_cli(messages=await thread.render_messages(), tools=tools) == prompt
    reply = await tk.parse_reply("Plain answer.", 3)
    assert reply["content"] == "Plain answer." and reply["toolCalls"] == []
    assert all(event["iteration"] == 3 for event in reply["events"])


def test_blocking_client_has_the_same_methods() -> None:
    with ThreadKeeper.spawn(binary=BINARY, args=MEMORY_ARGS) as tk:
        skip_unless_blocking_server_has(tk, "thread/pop", "thread/fork")
        thread = tk.open_thread()
        thread.append(sample_events())
        assert thread.events(tail=1) == sample_events()[4:]
        assert thread.pop().events == sample_events()[4:]
        fork = thread.fork(at_event=2)
        assert fork.events() == sample_events()[:2]
        assert "<!DOCTYPE html>" in thread.view(context_mode="xml")
        assert thread.clear().event_count == 0
        assert thread.events() == []
