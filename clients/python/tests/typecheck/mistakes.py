"""Typical mistakes in code using the client, each of which must fail type checking.

Every mistake carries ``# type: ignore[<code>]`` with the error code mypy reports for it; with
``warn_unused_ignores`` (part of ``--strict``) a mistake that type-checks leaves its ignore
unused and fails the run. Never executed.
"""

from __future__ import annotations

from threadkeeper import AgentEvent, AsyncThreadKeeper, ThreadKeeper, ThreadSettings


async def events(tk: AsyncThreadKeeper) -> None:
    thread = await tk.open_thread()
    # 1. a misspelled key: toolCallID for toolCallId
    await thread.append([{"type": "tool_call", "toolName": "f", "toolCallID": "c1", "args": {}, "iteration": 0}])  # type: ignore[list-item]
    # 2. args as a JSON string instead of an object
    await thread.append([{"type": "tool_call", "toolName": "f", "toolCallId": "c1", "args": '{"a": 1}', "iteration": 0}])  # type: ignore[list-item]
    # 3. a role the protocol does not have
    await thread.append([{"type": "message", "role": "bot", "content": "hi", "iteration": 0}])  # type: ignore[list-item]
    # 4. no iteration
    await thread.append([{"type": "message", "role": "user", "content": "hi"}])  # type: ignore[list-item]
    # 5. iteration as a string
    await thread.append([{"type": "message", "role": "user", "content": "hi", "iteration": "0"}])  # type: ignore[list-item]
    # 6. a misspelled event type (a custom type needs custom_event)
    await thread.append([{"type": "tool-call", "toolName": "f", "toolCallId": "c1", "args": {}, "iteration": 0}])  # type: ignore[list-item]
    # 7. a tool result without the call it answers
    await thread.append([{"type": "tool_result", "result": "4", "iteration": 0}])  # type: ignore[list-item]
    # 8. recoverable as a string
    await thread.append([{"type": "error", "error": "boom", "recoverable": "yes", "iteration": 0}])  # type: ignore[list-item]
    # 9. snake_case keys of another library
    await thread.append([{"type": "tool_call", "tool_name": "f", "tool_call_id": "c1", "args": {}, "iteration": 0}])  # type: ignore[list-item]
    # 10. an urgency the protocol does not have
    await thread.append([{"type": "human_input_requested", "question": "ok?", "urgency": "urgent", "iteration": 0}])  # type: ignore[list-item]
    # 11. one event instead of a list of events
    await thread.append({"type": "message", "role": "user", "content": "hi", "iteration": 0})  # type: ignore[arg-type]
    # 12. content as LangChain content blocks in an event
    event: AgentEvent = {"type": "message", "role": "user", "content": [{"type": "text", "text": "hi"}], "iteration": 0}  # type: ignore[typeddict-item]
    # 13. a plain dict read from elsewhere passed as an event without custom_event / CustomEvent
    loose: dict[str, object] = {"type": "message"}
    await thread.append([loose])  # type: ignore[list-item]
    del event


async def calls(tk: AsyncThreadKeeper) -> None:
    thread = await tk.open_thread()
    # 14. a misspelled settings key
    settings: ThreadSettings = {"responsePrefx": "Next:"}  # type: ignore[typeddict-unknown-key]
    # 15. a context mode that does not exist
    await tk.open_thread(settings={"contextMode": "json"})  # type: ignore[arg-type]
    # 16. a render format that does not exist
    await thread.render("markdown")  # type: ignore[arg-type]
    # 17. an escape mode that does not exist
    await thread.render_xml(escape="none")  # type: ignore[arg-type]
    # 18. expected_version as a string
    await thread.append([], expected_version="1")  # type: ignore[arg-type]
    # 19. a tokenizer the server does not know
    await thread.tokens(tokenizer="gpt-4")  # type: ignore[arg-type]
    # 20. the timeout as a string
    await thread.render_text(timeout="5s")  # type: ignore[arg-type]
    # 21. a stored message of a type LangChain's stored form does not have
    await tk.messages_to_xml([{"type": "user", "data": {"content": "hi"}}])  # type: ignore[typeddict-item]
    # 22. the camelCase wire key on a snake_case result
    print(thread.info.threadId)  # type: ignore[attr-defined]
    # 23. forgetting that the async client's calls must be awaited
    text: str = thread.render_xml()  # type: ignore[assignment]
    # 24. a result read with a key it does not have
    print((await thread.tokens())["total"])  # type: ignore[typeddict-item]
    del settings, text


def blocking(tk: ThreadKeeper) -> None:
    thread = tk.open_thread()
    # 25. awaiting the blocking client
    async def wrong() -> None:
        await thread.render_xml()  # type: ignore[misc]
    # 26. dangling_tool_calls the server does not know
    thread.render_messages(dangling_tool_calls="fix")  # type: ignore[arg-type]
    # 27. the blocking client used as an async context manager
    async def wrong_with() -> None:
        async with ThreadKeeper.spawn():  # type: ignore[attr-defined]
            pass
    del wrong, wrong_with
