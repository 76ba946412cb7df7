"""Finding the server binary."""

from __future__ import annotations

import json
import os
import shutil
import sys
from collections.abc import Mapping
from importlib import metadata
from pathlib import Path

from .errors import BinaryNotFoundError

EXECUTABLE = "threadkeeper.exe" if sys.platform == "win32" else "threadkeeper"
#: The distribution whose wheels carry the binary (the import name stays ``threadkeeper``).
DISTRIBUTION = "threadkeeper-sidecar"
BUILD_HINT = (
    f"Install the {DISTRIBUTION} wheel for this platform (`pip install {DISTRIBUTION}` puts the binary beside the "
    "package), or build it with `cargo build --release` in the threadkeeper repository (it lands in "
    "target/release/threadkeeper)"
)


def _is_executable(path: Path) -> bool:
    return path.is_file() and os.access(path, os.X_OK)


def _resolve_named(value: str, env: Mapping[str, str], origin: str, searched: list[str]) -> str:
    searched.append(f"{origin}={value}")
    looks_like_path = os.sep in value or "/" in value or Path(value).is_absolute()
    if looks_like_path:
        path = Path(value).resolve()
        if _is_executable(path):
            return str(path)
        raise BinaryNotFoundError(f"threadkeeper binary not found: {origin} is {value!r}, which is not an executable file. {BUILD_HINT}.", searched)
    found = shutil.which(value, path=env.get("PATH", ""))
    if found:
        return found
    raise BinaryNotFoundError(f"threadkeeper binary not found: {origin} is {value!r}, which is not an executable on PATH. {BUILD_HINT}.", searched)


def _bundled_candidates() -> list[Path]:
    """Where the wheel put the binary: the file its RECORD lists, which is right for venv,
    ``--user`` and ``--target`` installs alike. An editable install is a checkout: its copy of the
    binary goes stale when the checkout is rebuilt, so it is skipped for the checkout's own build."""
    try:
        distribution = metadata.distribution(DISTRIBUTION)
    except metadata.PackageNotFoundError:
        return []
    if _is_editable(distribution):
        return []
    return [
        Path(str(file.locate())).resolve()
        for file in distribution.files or []
        if file.name == EXECUTABLE and file.parent.name in ("bin", "Scripts", "scripts")
    ]


def _is_editable(distribution: metadata.Distribution) -> bool:
    try:
        direct_url = json.loads(distribution.read_text("direct_url.json") or "{}")
    except ValueError:
        return False
    return bool(isinstance(direct_url, dict) and direct_url.get("dir_info", {}).get("editable"))


def _checkout_candidates(start: Path, env: Mapping[str, str]) -> list[Path]:
    candidates: list[Path] = []
    if env.get("CARGO_TARGET_DIR"):
        candidates.append(Path(env["CARGO_TARGET_DIR"]).resolve() / "release" / EXECUTABLE)
    for directory in [start, *start.parents]:
        if (directory / "Cargo.toml").is_file():
            candidates.append(directory / "target" / "release" / EXECUTABLE)
    return candidates


def find_binary(binary: str | os.PathLike[str] | None = None, env: Mapping[str, str] | None = None, start_dir: str | os.PathLike[str] | None = None) -> str:
    """Finds the server binary: the explicit ``binary``, then ``THREADKEEPER_BIN`` (an override,
    as a developer testing another build wants it), then the binary the wheel installed beside this
    package, then ``threadkeeper`` on PATH, then ``target/release/threadkeeper`` of the checkout
    this package sits in (found by walking up to a ``Cargo.toml``).
    """
    env = os.environ if env is None else env
    searched: list[str] = []
    if binary:
        return _resolve_named(os.fspath(binary), env, "the binary argument", searched)
    if env.get("THREADKEEPER_BIN"):
        return _resolve_named(env["THREADKEEPER_BIN"], env, "THREADKEEPER_BIN", searched)

    for candidate in _bundled_candidates():
        searched.append(str(candidate))
        if _is_executable(candidate):
            return str(candidate)

    searched.append(f"PATH ({EXECUTABLE})")
    found = shutil.which(EXECUTABLE, path=env.get("PATH", ""))
    if found:
        return found

    start = Path(start_dir).resolve() if start_dir is not None else Path(__file__).resolve().parent
    for candidate in _checkout_candidates(start, env):
        searched.append(str(candidate))
        if _is_executable(candidate):
            return str(candidate)
    raise BinaryNotFoundError(
        "threadkeeper binary not found. Looked at: " + ", ".join(searched) + f". {BUILD_HINT}; "
        "or pass binary= to spawn, set THREADKEEPER_BIN, or put it on PATH.",
        searched,
    )
