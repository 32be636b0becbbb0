"""End-to-end fixtures: the whole stack under a real supervisord, on the simulator at a high speed factor.

Each fixture writes its own runtime folder under pytest's tmp (sockets, logs, the runtime configuration),
starts supervisord, waits until every registered process runs and is heard on the bus, and always stops
it in its finaliser, failure or not. A process that does not exist or does not start makes the fixture
fail loudly (naming it): these tests are never skipped.

Environment: ``SANZI_E2E_SPEED`` (default 20) and ``SANZI_E2E_SEED`` (default 1).
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from launch import simrun
from launch import stack as stack_module
from services.common import config as config_module

SPEED = float(os.environ.get("SANZI_E2E_SPEED", "20"))
SEED = int(os.environ.get("SANZI_E2E_SEED", "1"))
#: Processes get longer to start on a loaded 2-core machine than on a desk.
START_TIMEOUT_S = 60.0


@dataclass
class SimStack:
    """A running simulated stack."""

    config: Any
    stack: stack_module.Stack
    files: stack_module.StackFiles

    def restarts(self) -> dict[str, int]:
        return self.stack.restarts()

    def states(self) -> dict[str, str]:
        return {i["name"]: i["statename"] for i in self.stack.client.processes()}

    def log_lines(self, names: Iterable[str] | None = None) -> dict[str, list[dict[str, Any]]]:
        """Each program's JSON log lines (non-JSON lines are skipped)."""
        out: dict[str, list[dict[str, Any]]] = {}
        for name in names or self.stack.names:
            lines = []
            path = self.files.log_file(name)
            if path.exists():
                for line in path.read_text(errors="replace").splitlines():
                    if line.startswith("{"):
                        with contextlib.suppress(ValueError):
                            lines.append(json.loads(line))
            out[name] = lines
        return out

    def count_in_logs(self, text: str, names: Iterable[str] | None = None) -> dict[str, int]:
        """How many log lines of each program contain ``text`` (JSON or not: a logger configured before
        structlog's setup writes console lines)."""
        out: dict[str, int] = {}
        for name in names or self.stack.names:
            path = self.files.log_file(name)
            lines = path.read_text(errors="replace").splitlines() if path.exists() else []
            out[name] = sum(1 for line in lines if text in line)
        return out

    def where(self) -> str:
        """Where to look when an assertion fails."""
        return f"(logs in {self.files.log_dir})"


@contextlib.contextmanager
def sim_stack(
    runtime: Path,
    *,
    speed: float = SPEED,
    seed: int = SEED,
    exclude: Iterable[str] = (),
    extra: dict[str, Any] | None = None,
) -> Iterator[SimStack]:
    """Start the simulated stack in ``runtime``; stop it on the way out, whatever happened."""
    base = config_module.load(None, overrides={"runtime": {"dir": str(runtime)}})
    # the console on a free port: stacks of parallel runs must not compete for one (it says which it
    # took in console.address_file)
    extra = config_module.merge_dicts({"console": {"port": 0}}, extra or {})
    config = simrun.simulator_config(base, speed=speed, seed=seed, extra=extra)
    simrun.fresh_state(config)
    files = stack_module.prepare(config, command="e2e", exclude=exclude)
    stack = stack_module.Stack(files)
    try:
        stack.start()
        stack.wait_running(timeout=START_TIMEOUT_S)
        stack.wait_heartbeats(config, timeout=START_TIMEOUT_S)
        yield SimStack(config, stack, files)
    finally:
        stack.stop()


def short_runtime(factory: pytest.TempPathFactory, name: str) -> Path:
    # ipc:// endpoint paths are limited to about 107 bytes: keep the folder short.
    path = factory.mktemp(name, numbered=True)
    path.chmod(0o700)
    return path


def table(results: list[simrun.TaskResult]) -> str:
    return "\n" + simrun.format_table(results)
