"""`sanzi sim` refuses bad options before it starts anything."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_sanzi_sim_refuses_bad_options(runtime_dir: Path) -> None:
    runtime = runtime_dir
    env = dict(os.environ, SANZI_RUNTIME_DIR=str(runtime))
    for args, words in (
        (["--task", "7"], "tasks are 1 to 6"),
        (["--speed", "0"], "speed"),
        (["--games", "0"], "games"),
    ):
        done = subprocess.run(
            [sys.executable, "-m", "launch.cli", "sim", *args],
            cwd=REPO,
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 2, (args, done.stderr)
        assert words in done.stderr, (args, done.stderr)
    assert not (runtime / "supervisord.conf").exists()  # nothing was started
