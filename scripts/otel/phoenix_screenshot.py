"""`scripts/test-otel --readme-screenshot`: a thread's trace in Phoenix, as a person sees it,
taken in headless Chromium into docs/tracing-phoenix.png.

Environment: THREADKEEPER_BIN, PHOENIX_URL, WORK, OUT (the PNG to write).
"""
import json
import os
import subprocess
import sys
import time

from phoenix.client import Client

BIN = os.environ["THREADKEEPER_BIN"]
PHOENIX = os.environ["PHOENIX_URL"]
OUT = os.environ["OUT"]


def main():
    server = subprocess.Popen([BIN, "serve", "--store", "memory", "--otlp-endpoint", PHOENIX],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)
    next_id = 0

    def call(method, params):
        nonlocal next_id
        next_id += 1
        server.stdin.write((json.dumps({"jsonrpc": "2.0", "id": next_id, "method": method, "params": params}) + "\n").encode())
        answer = json.loads(server.stdout.readline())
        if "error" in answer:
            sys.exit(f"{method}: {answer['error']}")
        return answer["result"]

    t = int(time.time() * 1000) - 30_000
    call("initialize", {})
    call("thread/open", {"threadId": "support-42", "metadata": {"agentName": "support-agent"}})
    model = {"model": "gpt-4o", "provider": "openai"}
    call("thread/append", {"threadId": "support-42", "events": [
        {"type": "message", "role": "user", "content": "Where is my order 1234?", "iteration": 0, "timestamp": t},
        {"type": "message", "role": "assistant", "content": "Looking it up.", "iteration": 0, "timestamp": t + 1_400,
         **model, "usage": {"inputTokens": 812, "outputTokens": 64}, "finishReason": "tool_calls"},
        {"type": "tool_call", "toolName": "lookup_order", "toolCallId": "call_1", "args": {"id": "1234"}, "iteration": 0, "timestamp": t + 1_400},
        {"type": "tool_call", "toolName": "track_parcel", "toolCallId": "call_2", "args": {"order": "1234"}, "iteration": 0, "timestamp": t + 1_400},
        {"type": "tool_result", "toolCallId": "call_1", "result": {"status": "shipped"}, "iteration": 0, "timestamp": t + 1_900},
        {"type": "error", "error": "carrier API timed out", "recoverable": True, "toolCallId": "call_2", "iteration": 0, "timestamp": t + 4_400},
        {"type": "human_input_requested", "question": "Shall I open a ticket with the carrier?", "iteration": 1, "timestamp": t + 5_600},
        {"type": "human_input_received", "response": "Yes please", "iteration": 1, "timestamp": t + 9_000},
        {"type": "message", "role": "assistant", "content": "Ticket opened.", "iteration": 1, "timestamp": t + 10_300,
         **model, "usage": {"inputTokens": 1020, "outputTokens": 41}, "finishReason": "stop"},
        {"type": "completion", "result": "Order shipped; carrier ticket opened.", "verified": True, "iteration": 1, "timestamp": t + 10_400},
    ]})
    server.stdin.close()
    server.wait(timeout=30)

    client = Client(base_url=PHOENIX)
    deadline = time.time() + 30
    while True:
        spans = client.spans.get_spans(project_identifier="default", limit=1000)
        roots = [s for s in spans if s["name"] == "invoke_agent support-agent"]
        if roots or time.time() > deadline:
            break
        time.sleep(0.2)
    if not roots:
        sys.exit("the trace did not arrive")
    trace_id = roots[0]["context"]["trace_id"]
    project = client.projects.get(project_name="default")["id"]
    url = f"{PHOENIX}/projects/{project}/traces/{trace_id}"
    subprocess.run(["/usr/bin/chromium", "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                    "--no-first-run", "--disable-background-networking", f"--user-data-dir={os.environ['WORK']}/chromium",
                    "--window-size=1440,900", "--virtual-time-budget=20000", f"--screenshot={OUT}", url],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    print(f"test-otel: wrote {OUT} ({url})")


main()
