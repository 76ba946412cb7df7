"""The same with asyncio: spawn is an async context manager, every call has a timeout."""

import asyncio

from threadkeeper import AsyncThreadKeeper, RequestTimeoutError, custom_event


async def main() -> None:
    async with AsyncThreadKeeper.spawn(args=["--store", "memory"], timeout=10) as tk:
        thread = await tk.open_thread()
        await thread.append(
            [
                {"type": "message", "role": "user", "content": "Hi!", "iteration": 0},
                custom_event("checkpoint", 0, label="after greeting"),  # a type of our own, kept whole
            ]
        )
        try:
            print(await thread.render_xml(timeout=2.5))
        except RequestTimeoutError as error:
            print(f"no answer from the server: {error}")
        print(await thread.events(tail=1))


asyncio.run(main())
