"""The person: a real one at the terminal (policy "you") or in the browser console (policy "web")
playing instead of the simulated person."""

from __future__ import annotations

import dataclasses
import os
import signal
import subprocess
import sys
from collections.abc import Sequence
from typing import Final

from services.simhuman.policy import INTERACTIVE_POLICY, WEB_POLICY

from .. import stack as stack_module
from .plan import TaskPlan

#: How long the person at the terminal has to leave after SIGTERM before being killed.
STOP_TIMEOUT_S: Final = 5.0


def for_person(plans: Sequence[TaskPlan], *, interactive: bool, web: bool) -> list[TaskPlan]:
    """``plans`` as a real person plays them: the person decides, so the orchestrator sets neither a
    policy of its own nor misbehaviours. At the terminal (``interactive``) the person's process reads
    it; in the browser (``web``) the simulated person (still running, so that the page can hand it the
    game back) stands aside. Neither: ``plans`` unchanged."""
    if interactive:
        return [dataclasses.replace(p, policy=INTERACTIVE_POLICY, misbehave=()) for p in plans]
    if web:
        return [dataclasses.replace(p, policy=WEB_POLICY, misbehave=()) for p in plans]
    return list(plans)


def start_interactive_human(files: stack_module.StackFiles) -> subprocess.Popen[bytes]:
    """The simulated person with policy "you", in the foreground on this terminal."""
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "services.simhuman",
            "--config",
            str(files.config_file),
            "--set",
            f"simhuman.policy='{INTERACTIVE_POLICY}'",
            # the terminal is for the board and the prompt, not for the log
            "--set",
            "log.level='warning'",
        ],
        cwd=stack_module.PROJECT_ROOT,
        env=env,
    )


def stop_child(proc: subprocess.Popen[bytes], timeout: float = STOP_TIMEOUT_S) -> None:
    """Stop ``proc`` (SIGTERM, then SIGKILL after ``timeout``) and reap it."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
