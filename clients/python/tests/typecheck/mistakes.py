"""Typical mistakes in code using the client, each of which must fail type checking.

Every mistake carries ``# type: ignore[<code>]`` with the error code mypy reports for it; with
``warn_unused_ignores`` (part of ``--strict``) a mistake that type-checks leaves its ignore
unused and fails the run. Never executed.
"""

from __future__ import annotations

from pathlib import Path

from threadkeeper import (
    AgentEvent,
    AsyncThreadKeeper,
    BlobContent,
    BlobInfo,
    ThreadKeeper,
    ThreadSettings,
    audio_part,
    file_part,
    image_part,
    text_of,
    text_part,
)


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
    # 12. content as LangChain's image_url blocks instead of content parts
    event: AgentEvent = {"type": "message", "role": "user", "content": [{"type": "image_url", "image_url": {"url": "https://x.test/a.png"}}], "iteration": 0}  # type: ignore[list-item]
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


def narrowing(tk: ThreadKeeper) -> None:
    thread = tk.open_thread()
    for event in thread.events():
        if event["type"] == "tool_call":
            name: str = event["toolName"]  # narrowed: a tool call has a toolName
            # 28. a misspelled key of the narrowed event
            print(event["toolNmae"])  # type: ignore[typeddict-item]
        # 29. a key the event types do not all have, before narrowing
        print(event["toolName"])  # type: ignore[typeddict-item]
    del name


async def narrowing_async(tk: AsyncThreadKeeper) -> None:
    thread = await tk.open_thread()
    for event in await thread.events():
        if event["type"] == "message":
            role: str = event["role"]
            # 30. a misspelled key of the narrowed event (async client)
            print(event["rol"])  # type: ignore[typeddict-item]
    del role


def options(tk: ThreadKeeper) -> None:
    thread = tk.open_thread()
    # 31. a misspelled option of to_langchain_messages
    thread.to_langchain_messages(context_mod="xml")  # type: ignore[call-arg]
    # 32. an option value to_langchain_messages does not take
    thread.to_langchain_messages(dangling_tool_calls="fix")  # type: ignore[arg-type]
    # 33. a misspelled render option of render / tokens / view
    thread.render("messages", contxt_mode="xml")  # type: ignore[call-arg]
    thread.tokens(instruction="Be brief.")  # type: ignore[call-arg]
    thread.view(group_tool_call=True)  # type: ignore[call-arg]
    # 34. a cache_control the protocol does not have
    thread.render_anthropic(cache_control="always")  # type: ignore[arg-type]
    # 35. a TTL Anthropic does not have
    thread.render_anthropic(cache_control={"ttl": "10m"})  # type: ignore[arg-type]
    # 36. an Anthropic cache TTL on an OpenAI render, and OpenAI's field name for the option's
    thread.render_openai_chat(cache_control={"ttl": "5m"})  # type: ignore[call-overload]
    thread.render_openai_responses(cache_control={"prompt_cache_key": "k"})  # type: ignore[call-overload]
    # 38. content read as a string where explicit breakpoints make it text parts
    thread.render_openai_chat(cache_control="auto")["messages"][0]["content"].upper()  # type: ignore[union-attr]
    # What is right type-checks (else the run fails).
    thread.to_langchain_messages(context_mode="xml", dangling_tool_calls="drop", timeout=5)
    thread.render_anthropic(cache_control="auto")
    thread.render_anthropic(cache_control={"ttl": "1h"})
    cached = thread.render_openai_chat(cache_control={"key": "tenant-7", "ttl": "30m"})
    print(cached["prompt_cache_key"], cached.get("prompt_cache_options"))
    print(len(thread.render_openai_chat(cache_control="none")["messages"]))
    thread.render_openai_responses(context_mode="xml", cache_control="auto")["input"]
    thread.render("anthropic", cache_control="none", budget={"maxTokens": 30000, "dropTo": 18000, "tokenizer": "o200k_base"})
    # 37. the budget's dropTo misspelled, or as a string
    thread.render("messages", budget={"maxTokens": 30000, "drop_to": 18000})  # type: ignore[arg-type]
    thread.render("messages", budget={"maxTokens": 30000, "dropTo": "18000"})  # type: ignore[arg-type]


async def media(tk: AsyncThreadKeeper, png: bytes, shot: Path) -> None:
    thread = await tk.open_thread()
    # What is right type-checks (else the run fails): parts from bytes or a file, a blob put first.
    await thread.append(
        [
            {"type": "message", "role": "user", "iteration": 0, "content": [text_part("What is this?"), image_part(png, detail="high"), file_part(shot)]},
            {"type": "tool_call", "toolName": "screenshot", "toolCallId": "c1", "args": {}, "iteration": 0},
            {"type": "tool_result", "toolCallId": "c1", "iteration": 0, "content": [image_part(shot)]},
            {"type": "tool_result", "toolCallId": "c2", "iteration": 0, "result": "ok", "content": [audio_part(bytearray(png), media_type="audio/wav")]},
            {"type": "message", "role": "user", "iteration": 1, "content": [{"type": "image", "data": memoryview(png)}, {"type": "image", "url": "https://x.test/a.png"}]},
        ]
    )
    info: BlobInfo = await tk.put_blob(png)
    await thread.append([{"type": "message", "role": "user", "iteration": 1, "content": [{"type": "image", "blob": info.blob, "mediaType": info.media_type}]}])
    for read in await thread.events():
        if read["type"] == "message" and not isinstance(read["content"], str):
            for part in read["content"]:
                if part["type"] == "image" and "blob" in part:
                    blob: BlobContent = await tk.get_blob(part["blob"])
                    data: bytes = blob.data
                    print(part.get("width"), part.get("height"), part.get("size"), len(data), (await tk.stat_blob(part["blob"])).size)
            print(text_of(read["content"]))
    # 39. an image as Anthropic's base64 source block instead of a part with data
    await thread.append([{"type": "message", "role": "user", "iteration": 0, "content": [{"type": "image", "source": {"type": "base64", "data": "iVBO"}}]}])  # type: ignore[list-item]
    # 40. a detail the protocol does not have
    image_part(png, detail="max")  # type: ignore[arg-type]
    # 41. the media type in the wire's spelling instead of the keyword's
    image_part(png, mediaType="image/png")  # type: ignore[call-arg]
    # 42. bytes as a list of ints
    image_part([137, 80, 78, 71])  # type: ignore[arg-type]
    # 43. a tool result's content as a string (content is parts; a string goes in result)
    await thread.append([{"type": "tool_result", "toolCallId": "c1", "iteration": 0, "content": "done"}])  # type: ignore[list-item]
    # 44. a filename on an image part (files have one)
    await thread.append([{"type": "message", "role": "user", "iteration": 0, "content": [{"type": "image", "data": png, "filename": "a.png"}]}])  # type: ignore[list-item]
    # 45. events read back carry no bytes: their media parts name a blob
    for read in await thread.events():
        if read["type"] == "message" and not isinstance(read["content"], str):
            print([part["data"] for part in read["content"] if part["type"] == "image"])  # type: ignore[typeddict-item]
    # 46. a blob's bytes read as base64 text (get_blob answers bytes)
    (await tk.get_blob(info.blob)).data.encode()  # type: ignore[attr-defined]
    # 47. the media type as a positional argument
    await tk.put_blob(png, "image/png")  # type: ignore[call-arg]


def media_renders(tk: ThreadKeeper) -> None:
    thread = tk.open_thread()
    # What is right type-checks (else the run fails): every format-specific render takes media and media_tokens.
    thread.render_anthropic(media={"keepImages": 2}, media_tokens="anthropic", cache_control="auto")
    thread.render_openai_chat(media={"keepImages": 2}, media_tokens="openai-tiles")
    print(thread.render_openai_chat(media={"keepImages": 2}, cache_control="auto")["prompt_cache_key"])
    thread.render_openai_responses(media={"keepImages": 2}, media_tokens="openai-patches")
    thread.render_gemini(media={"keepImages": 2}, media_tokens="gemini")
    thread.render_bedrock_converse(media={"keepImages": 2}, boto3=True)
    thread.render_messages(media={"keepImages": 2}, media_tokens="text")
    thread.render_text(media={"keepImages": 2})
    thread.render_xml(media={"keepImages": 2}, incremental=True)
    thread.to_langchain_messages(media={"keepImages": 2})
    # 48. keepImages in snake case
    thread.render_anthropic(media={"keep_images": 2})  # type: ignore[arg-type]
    # 49. keepImages as a string
    thread.render_gemini(media={"keepImages": "2"})  # type: ignore[arg-type]
    # 50. a media token rule the server does not know, and a bare count for media
    thread.render_bedrock_converse(media_tokens="openai")  # type: ignore[arg-type]
    thread.render_messages(media=2)  # type: ignore[arg-type]
    # 51. a mistaken option on an overloaded render
    thread.render_openai_chat(media_tokens="tiles")  # type: ignore[call-overload]
