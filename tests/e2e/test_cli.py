"""The README's main command as a user runs it: `sanzi sim` in a subprocess, its table, its JSON summary,
its exit code, and no process of the stack left behind afterwards."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import SEED, SPEED, short_runtime

pytestmark = pytest.mark.e2e

REPO = Path(__file__).resolve().parents[2]


def processes_mentioning(text: str) -> list[str]:
    """Command lines of live processes that contain ``text`` (the stack's runtime folder)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            state = (entry / "stat").read_text().rsplit(") ", 1)[1][:1]
        except OSError:
            continue
        if text in cmdline and state != "Z":
            found.append(cmdline)
    return found


def test_sanzi_sim_runs_a_task_and_cleans_up(tmp_path_factory: pytest.TempPathFactory) -> None:
    runtime = short_runtime(tmp_path_factory, "cli")
    summary = runtime / "summary.json"
    env = dict(os.environ, SANZI_RUNTIME_DIR=str(runtime))
    env.pop("SANZI_CONFIG", None)
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "launch.cli",
            "sim",
            "--task",
            "2",
            "--speed",
            str(SPEED),
            "--seed",
            str(SEED),
            "--summary",
            str(summary),
            # the console on a free port: parallel runs must not compete for 8080
            "--set",
            "console.port=0",
        ],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1/1 tasks met their contest requirement" in done.stdout
    assert "sanzi sim: the console is at http://127.0.0.1:" in done.stderr
    data = json.loads(summary.read_text())
    assert data["ok"] is True and [t["task"] for t in data["tasks"]] == [2]
    assert data["tasks"][0]["world_board"] == data["tasks"][0]["referee_board"]
    assert data["tasks"][0]["placements"] == 4
    assert processes_mentioning(str(runtime)) == []
