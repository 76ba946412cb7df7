from __future__ import annotations

import os
import shutil
import stat
import time
from pathlib import Path

import pytest
from conftest import BINARY, MEMORY_ARGS, spawn_memory

from threadkeeper import AsyncThreadKeeper, BinaryNotFoundError, ErrorCode, ServerExitedError, ThreadKeeperError, find_binary


async def test_spawn_initializes_and_reports_the_server() -> None:
    tk = await spawn_memory()
    try:
        assert tk.server["serverInfo"]["name"] == "threadkeeper"
        assert isinstance(tk.server["serverInfo"]["version"], str)
        assert tk.server["protocolVersion"] == 1
        assert tk.server["capabilities"]["store"] == {"kind": "memory"}
        assert tk.server["capabilities"]["renderFormats"] == ["xml", "messages", "text", "openai-chat", "openai-responses", "anthropic", "ai-sdk", "pydantic-ai", "gemini", "bedrock-converse"]
        assert tk.binary == BINARY
        assert tk.pid > 0
    finally:
        await tk.close()


async def test_close_runs_shutdown_and_exit_then_calls_fail_at_once() -> None:
    tk = await spawn_memory()
    assert await tk.close() == 0
    with pytest.raises(ServerExitedError, match="closed") as info:
        await tk.escape_xml("x")
    assert info.value.code == ErrorCode.SERVER_EXITED
    assert await tk.close() == 0, "closing twice is harmless"


async def test_async_with_closes() -> None:
    async with await spawn_memory() as tk:
        assert await tk.escape_xml("&") == "&amp;"
    assert tk.returncode == 0


async def test_second_initialize_is_refused(tk: AsyncThreadKeeper) -> None:
    with pytest.raises(ThreadKeeperError) as info:
        await tk.request("initialize", {})
    assert info.value.code == ErrorCode.INVALID_REQUEST


async def test_unknown_method(tk: AsyncThreadKeeper) -> None:
    with pytest.raises(ThreadKeeperError) as info:
        await tk.request("thread/frobnicate", {})
    assert info.value.code == ErrorCode.METHOD_NOT_FOUND
    assert info.value.message


async def test_bad_arguments_fail_spawn_with_status_and_stderr() -> None:
    started = time.monotonic()
    with pytest.raises(ServerExitedError) as info:
        await AsyncThreadKeeper.spawn(binary=BINARY, args=["--no-such-flag"])
    assert time.monotonic() - started < 5
    error = info.value
    assert error.exit_code == 2
    assert "--no-such-flag" in error.stderr
    assert "exited with status 2" in error.message
    assert "--no-such-flag" in str(error)


def _fake_executable(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\nexit 0\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return path


def test_discovery_order(tmp_path: Path) -> None:
    explicit = _fake_executable(tmp_path / "explicit" / "tk")
    from_env = _fake_executable(tmp_path / "env" / "tk")
    on_path = _fake_executable(tmp_path / "path" / "threadkeeper")
    env = {"THREADKEEPER_BIN": str(from_env), "PATH": str(tmp_path / "path")}
    assert find_binary(explicit, env) == str(explicit)
    assert find_binary(None, env) == str(from_env)
    assert find_binary(None, {"PATH": str(tmp_path / "path")}) == str(on_path)


def test_discovery_falls_back_to_the_checkout(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "Cargo.toml").write_text("[package]\n")
    built = _fake_executable(repo / "target" / "release" / "threadkeeper")
    package = repo / "clients" / "python" / "src" / "threadkeeper"
    package.mkdir(parents=True)
    assert find_binary(None, {"PATH": ""}, start_dir=package) == str(built)


def test_missing_binary_says_how_to_build_it(tmp_path: Path) -> None:
    with pytest.raises(BinaryNotFoundError) as info:
        find_binary(None, {"PATH": str(tmp_path)}, start_dir=tmp_path)
    assert info.value.code == ErrorCode.BINARY_NOT_FOUND
    assert "cargo build --release" in info.value.message
    assert "THREADKEEPER_BIN" in info.value.message
    with pytest.raises(BinaryNotFoundError, match="cargo build --release"):
        find_binary(tmp_path / "threadkeeper", {})
    with pytest.raises(BinaryNotFoundError, match="THREADKEEPER_BIN"):
        find_binary(None, {"THREADKEEPER_BIN": str(tmp_path / "nope"), "PATH": ""})


async def test_spawn_uses_threadkeeper_bin_from_env(tmp_path: Path) -> None:
    copy = tmp_path / "threadkeeper-copy"
    shutil.copy(BINARY, copy)
    copy.chmod(0o755)
    env = {**os.environ, "THREADKEEPER_BIN": str(copy)}
    async with await AsyncThreadKeeper.spawn(env=env, args=MEMORY_ARGS) as tk:
        assert tk.binary == str(copy)
        assert await tk.escape_xml("<") == "&lt;"
