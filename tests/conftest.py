"""Shared fixtures: a private runtime folder per test, a configuration pointing into it, and an
in-process bus (both forwarders) for tests that need real sockets."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from services.common import config as config_module  # noqa: E402


@pytest.fixture
def runtime_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    # ipc:// paths are limited to ~107 bytes: keep the folder short.
    path = Path(tmp_path_factory.mktemp("rt", numbered=True))
    path.chmod(0o700)
    return path


@pytest.fixture
def config(runtime_dir: Path) -> Any:
    return config_module.load(None, overrides={"runtime": {"dir": str(runtime_dir)}})


@pytest.fixture
def bus(config: Any) -> Iterator[Any]:
    """Both forwarders running in this process on ``config``'s endpoints; yields the config."""
    from tests.inprocess import in_process_bus

    with in_process_bus(config.bus):
        yield config


@pytest.fixture
def subprocess_env(runtime_dir: Path) -> dict[str, str]:
    """Environment for child processes: this repo importable, the runtime folder set."""
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    env["SANZI_RUNTIME_DIR"] = str(runtime_dir)
    env["PYTHONUNBUFFERED"] = "1"
    return env


#: test folders whose tests start processes (a whole stack under supervisord, the CLI): with
#: pytest-xdist (``-n 2 --dist loadgroup``) they all run on one worker, one after another, while the
#: other worker takes the rest.
STACK_TESTS = ("e2e", "launch_stack")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        parts = Path(str(item.fspath)).relative_to(REPO / "tests").parts
        if parts and parts[0] in STACK_TESTS:
            item.add_marker(pytest.mark.xdist_group("stack"))
