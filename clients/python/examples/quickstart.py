"""A thread kept by the server, rendered as the XML document (blocking client)."""

from threadkeeper import ThreadKeeper

with ThreadKeeper.spawn(args=["--store", "memory"], timeout=10) as tk:
    thread = tk.open_thread(settings={"responsePrefix": "Next:"})
    thread.append(
        [
            {"type": "message", "role": "user", "content": "What is 2+2?", "iteration": 0},
            {"type": "tool_call", "toolName": "calculator", "toolCallId": "c1", "args": {"expression": "2+2"}, "iteration": 1},
            {"type": "tool_result", "toolCallId": "c1", "result": "4", "iteration": 1},
        ]
    )
    print(thread.render_xml())
