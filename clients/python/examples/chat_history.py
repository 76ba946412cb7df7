"""A LangChain chat history kept in a thread: add messages, read them back, clear."""

from langchain_core.messages import AIMessage, HumanMessage

from threadkeeper import ThreadKeeper
from threadkeeper.chat_history import ThreadChatMessageHistory

with ThreadKeeper.spawn(args=["--store", "memory"]) as tk:
    history = ThreadChatMessageHistory(tk.open_thread("chat-1", settings={"instructions": "Be brief."}))
    history.add_messages([HumanMessage("What is 2+2?"), AIMessage("4")])
    for message in history.messages:  # SystemMessage("Be brief."), HumanMessage, AIMessage
        print(f"{message.type}: {message.content}")
    events = tk.messages_to_events([HumanMessage("And 3+3?", id="m7")], iteration=1)
    print(events)  # [{"type": "message", "role": "user", "content": "And 3+3?", "iteration": 1, "messageId": "m7"}]
    history.clear()
