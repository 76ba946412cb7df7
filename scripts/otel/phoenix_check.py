"""The Phoenix half of scripts/test-otel (run by it with Phoenix up; see there).

Environment: THREADKEEPER_BIN, PHOENIX_URL, WORK (a scratch directory).
"""
import json
import os
import subprocess
import sys
import time

from phoenix.client import Client

BIN = os.environ["THREADKEEPER_BIN"]
PHOENIX = os.environ["PHOENIX_URL"]
WORK = os.environ["WORK"]
STORE = f"sqlite:{WORK}/threads.db"
SECRETS = ["SECRET-ask", "SECRET-say", "SECRET-arg", "SECRET-result", "SECRET-fail", "SECRET-question",
           "SECRET-answer", "SECRET-summary", "SECRET-done", "SECRET-instructions"]


def fail(message):
    print(f"test-otel: FAILED: {message}", file=sys.stderr)
    sys.exit(1)


class Server:
    def __init__(self, args):
        self.process = subprocess.Popen([BIN, "serve", "--store", STORE, *args], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, bufsize=0, env={**os.environ, "RUST_LOG": "warn"})
        self.next_id = 0

    def call(self, method, params=None):
        self.next_id += 1
        message = {"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params or {}}
        self.process.stdin.write((json.dumps(message) + "\n").encode())
        answer = json.loads(self.process.stdout.readline())
        if "error" in answer:
            fail(f"{method}: {answer['error']}")
        return answer["result"]

    def stop(self):
        self.call("shutdown")
        self.process.stdin.write(b'{"jsonrpc":"2.0","method":"exit"}\n')
        self.process.stdin.close()
        return self.process.wait(timeout=30)


def append_three_runs(server, thread_id):
    def append(*events):
        server.call("thread/append", {"threadId": thread_id, "events": list(events)})

    append({"type": "message", "role": "user", "content": "SECRET-ask", "iteration": 0, "timestamp": 1_000})
    append({"type": "message", "role": "assistant", "content": "SECRET-say", "iteration": 0, "timestamp": 2_000,
            "model": "gpt-4o", "provider": "openai", "usage": {"inputTokens": 10, "outputTokens": 5}},
           {"type": "tool_call", "toolName": "weather", "toolCallId": "c1", "args": {"city": "SECRET-arg"}, "iteration": 0, "timestamp": 2_000},
           {"type": "tool_call", "toolName": "clock", "toolCallId": "c2", "args": {}, "iteration": 0, "timestamp": 2_000})
    append({"type": "tool_result", "toolCallId": "c2", "result": "SECRET-result", "iteration": 0, "timestamp": 2_500})
    append({"type": "tool_result", "toolCallId": "c1", "result": {"t": "SECRET-result"}, "iteration": 0, "timestamp": 3_000})
    append({"type": "message", "role": "assistant", "content": "SECRET-say", "iteration": 1, "timestamp": 4_000, "finishReason": "stop"},
           {"type": "completion", "result": "SECRET-done", "verified": True, "iteration": 1, "timestamp": 4_100})
    append({"type": "message", "role": "user", "content": "SECRET-ask", "iteration": 2, "timestamp": 5_000},
           {"type": "tool_call", "toolName": "book", "toolCallId": "c3", "args": {"q": "SECRET-arg"}, "iteration": 2, "timestamp": 6_000})
    append({"type": "error", "error": "SECRET-fail", "recoverable": True, "toolCallId": "c3", "iteration": 2, "timestamp": 6_500})
    append({"type": "human_input_requested", "question": "SECRET-question", "iteration": 2, "timestamp": 7_000})
    append({"type": "human_input_received", "response": "SECRET-answer", "iteration": 2, "timestamp": 8_000})
    append({"type": "message", "role": "assistant", "content": "SECRET-say", "iteration": 3, "timestamp": 9_000})
    append({"type": "message", "role": "user", "content": "SECRET-ask", "iteration": 4, "timestamp": 10_000})
    plan = server.call("thread/planCompaction", {"threadId": thread_id, "keepRecentIterations": 1})
    summaries = [{"iteration": i["iteration"], "summary": "SECRET-summary"} for i in plan["iterations"]]
    server.call("thread/compact", {"threadId": thread_id, "summaries": summaries, "keepRecentIterations": 1})
    append({"type": "message", "role": "assistant", "content": "SECRET-say", "iteration": 4, "timestamp": 11_000},
           {"type": "completion", "result": "SECRET-done", "verified": False, "iteration": 4, "timestamp": 11_100})


def flat(attributes, prefix=""):
    """Phoenix may give attributes nested by their dotted keys: flattened back."""
    out = {}
    for key, value in (attributes or {}).items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            out.update(flat(value, name + "."))
        else:
            out[name] = value
    return out


def spans_of(client, project):
    try:
        return client.spans.get_spans(project_identifier=project, limit=1000, timeout=10)
    except Exception:  # the project does not exist until its first span arrives
        return []


def shape(spans):
    """A project's spans without their ids and thread id: what must match between two threads."""
    by_id = {s["context"]["span_id"]: s for s in spans}
    out = []
    for s in spans:
        attributes = flat(s.get("attributes"))
        # The thread id, and Phoenix's own session id made from it.
        attributes.pop("gen_ai.conversation.id", None)
        attributes.pop("session.id", None)
        parent = by_id.get(s.get("parent_id") or "")
        out.append(json.dumps([s["name"], s["span_kind"], s["start_time"], s["end_time"], s["status_code"],
                               parent["name"] if parent else None, sorted(attributes.items(), key=str),
                               [(e["name"], e["timestamp"]) for e in s.get("events", [])]], sort_keys=True, default=str))
    return sorted(out)


def main():
    client = Client(base_url=PHOENIX)
    server = Server(["--otlp-endpoint", PHOENIX])
    server.call("initialize")
    server.call("thread/open", {"threadId": "trip", "metadata": {"agentName": "planner"},
                                "settings": {"instructions": "SECRET-instructions"}})
    append_three_runs(server, "trip")
    last_append = time.monotonic()
    while True:
        spans = [s for s in spans_of(client, "default") if flat(s.get("attributes")).get("gen_ai.conversation.id") == "trip"]
        roots = [s for s in spans if not s.get("parent_id")]
        if len(roots) == 3 and len(spans) == 11:
            break
        if time.monotonic() - last_append > 30:
            fail(f"after 30 s Phoenix has {len(spans)} spans, {len(roots)} roots")
        time.sleep(0.05)
    seen_after = time.monotonic() - last_append
    print(f"test-otel: the three traces were in Phoenix {seen_after:.2f} s after the last append's answer")
    if seen_after > 2:
        fail("not within 2 s")

    names = sorted(s["name"] for s in spans)
    expected = sorted(["invoke_agent planner"] * 3 + ["chat gpt-4o", "chat", "chat", "chat", "chat",
                      "execute_tool weather", "execute_tool clock", "execute_tool book"])
    if names != expected:
        fail(f"span names {names}")
    root_ids = {s["context"]["span_id"]: s for s in roots}
    for s in spans:
        if s.get("parent_id") and s["parent_id"] not in root_ids:
            fail(f"{s['name']} is not under a run")
        if s.get("parent_id") and root_ids[s["parent_id"]]["context"]["trace_id"] != s["context"]["trace_id"]:
            fail(f"{s['name']} is in another trace than its run")
    book = next(s for s in spans if s["name"] == "execute_tool book")
    if book["status_code"] != "ERROR" or flat(book["attributes"]).get("error.type") != "tool_error":
        fail(f"the failed tool: {book['status_code']} {book.get('attributes')}")
    chat = next(s for s in spans if s["name"] == "chat gpt-4o")
    attributes = flat(chat["attributes"])
    if (attributes.get("gen_ai.request.model"), attributes.get("gen_ai.provider.name"), attributes.get("gen_ai.usage.input_tokens")) != ("gpt-4o", "openai", 10):
        fail(f"the first chat: {attributes}")
    events = sorted(e["name"] for r in roots for e in r.get("events", []))
    if events != sorted(["threadkeeper.human_input.requested", "threadkeeper.human_input.received"] + ["threadkeeper.compaction"] * 4):
        fail(f"span events {events}")
    text = json.dumps(spans, default=str)
    leaked = [secret for secret in SECRETS if secret in text]
    if leaked:
        fail(f"thread text in Phoenix: {leaked}")
    print("test-otel: tree, names, kinds, attributes, error status and span events as expected; no thread text")

    # The same thread, forked (a fork sends nothing) and sent by `export --otlp` to another project.
    server.call("thread/fork", {"threadId": "trip", "newThreadId": "trip-copy"})
    if server.stop() != 0:
        fail("serve did not exit 0")
    env = {**os.environ, "OTEL_RESOURCE_ATTRIBUTES": "openinference.project.name=backfill"}
    subprocess.run([BIN, "export", "--otlp", PHOENIX, "--store", STORE, "--thread", "trip-copy"], check=True, env=env)
    deadline = time.monotonic() + 30
    while len(backfilled := spans_of(client, "backfill")) < 11:
        if time.monotonic() > deadline:
            fail(f"the backfill gave {len(backfilled)} spans")
        time.sleep(0.1)
    if shape(backfilled) != shape(spans):
        live, later = set(shape(spans)), set(shape(backfilled))
        fail(f"export --otlp gave other spans than the live export: only live {sorted(live - later)}, only backfilled {sorted(later - live)}")
    print("test-otel: export --otlp gave the same 11 spans")
    print("test-otel: 1 passed, 0 failed")


main()
