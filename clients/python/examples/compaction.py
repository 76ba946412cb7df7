"""Keeping a long thread within a context window: count tokens, plan a compaction, apply summaries."""

from threadkeeper import IterationSummary, ThreadKeeper

with ThreadKeeper.spawn(args=["--store", "memory"]) as tk:
    thread = tk.open_thread()
    for i in range(6):
        thread.append(
            [
                {"type": "message", "role": "user", "content": f"Step {i}: keep going.", "iteration": i},
                {"type": "message", "role": "assistant", "content": f"Done with step {i}. " * 20, "iteration": i},
            ]
        )
    print("tokens:", thread.tokens()["tokens"])
    plan = thread.plan_compaction(max_context_tokens=200, keep_recent_iterations=2)
    if plan["needed"]:
        # A real host asks a model with each step's prompt; here the summary is written by hand.
        summaries: list[IterationSummary] = [{"iteration": s["iteration"], "summary": f"Step {s['iteration']} done."} for s in plan["iterations"]]
        thread.compact(summaries, keep_recent_iterations=2)
    print("after compaction:", thread.tokens()["tokens"])
    print(thread.pop().events)  # undo the last event
