"""An OpenAI Agents SDK run whose conversation is kept in a thread (needs OPENAI_API_KEY to call the model)."""

import asyncio
import os

from agents import Agent, Runner

from threadkeeper import AsyncThreadKeeper
from threadkeeper.openai_agents import ThreadSession


async def main() -> None:
    async with AsyncThreadKeeper.spawn(args=["--store", "memory"]) as tk:
        session = await ThreadSession.open(tk, "support-42")
        if not os.environ.get("OPENAI_API_KEY"):
            print("set OPENAI_API_KEY to run the agent; the session is", session.session_id)
            return
        agent = Agent(name="assistant", instructions="Reply very concisely.")
        await Runner.run(agent, "What city is the Golden Gate Bridge in?", session=session)
        result = await Runner.run(agent, "What state is it in?", session=session)  # sees the first turn
        print(result.final_output)
        print(await session.get_items(limit=2))


asyncio.run(main())
