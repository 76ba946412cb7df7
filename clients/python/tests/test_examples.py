"""The scripts in examples/ run as written against the server under test."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from conftest import BINARY, PACKAGE_DIR

from threadkeeper import ThreadKeeper

EXAMPLES = PACKAGE_DIR / "examples"


def run(name: str) -> str:
    env = {k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"}  # never reach a model
    env["THREADKEEPER_BIN"] = BINARY
    done = subprocess.run([sys.executable, str(EXAMPLES / name)], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout


def server_has(method: str) -> bool:
    with ThreadKeeper.spawn(binary=BINARY, args=["--store", "memory"]) as tk:
        try:
            tk.request(method, {})
        except Exception as error:
            return getattr(error, "code", None) != -32601
        return True


def test_quickstart() -> None:
    assert run("quickstart.py").endswith('status="success" iteration="1">4</event>\n</thread>\nNext:\n')


def test_quickstart_async() -> None:
    out = run("quickstart_async.py")
    assert '<event type="checkpoint" id="1" iteration="0">' in out
    assert out.endswith("[{'type': 'checkpoint', 'iteration': 0, 'label': 'after greeting'}]\n")


def test_chat_history() -> None:
    if not server_has("messages/toEvents"):
        pytest.skip("the server under test has no messages/toEvents")
    assert run("chat_history.py").startswith("system: Be brief.\nhuman: What is 2+2?\nai: 4\n")


def test_agents_session_without_a_key() -> None:
    assert run("agents_session.py") == "set OPENAI_API_KEY to run the agent; the session is support-42\n"


def test_compaction() -> None:
    if not server_has("thread/tokens"):
        pytest.skip("the server under test has no thread/tokens")
    assert "after compaction:" in run("compaction.py")
