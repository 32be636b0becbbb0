"""Fixtures of the launch tools' tests: a real bus (both forwarders in-process) on a private runtime folder,
and helpers that make messages as a process would publish them."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from typing import Any

import pytest
import structlog

import messages
from services.common import config as config_module
from tests.inprocess import in_process_bus


def frames_for(
    topic: str, message: messages.Message, seq: int, source: str = "test", pid: int = 1234
) -> list[bytes]:
    """The three frames of ``message`` as process ``source`` would publish it."""
    header = messages.make_header(message, source, seq)
    header = messages.Header(
        type=header.type,
        version=header.version,
        source=source,
        pid=pid,
        seq=seq,
        mono_ns=header.mono_ns,
        wall_ns=header.wall_ns,
    )
    return messages.encode(topic, header, message)


@pytest.fixture(autouse=True)
def _reset_logging() -> Iterator[None]:
    """The commands configure structlog to print to the sys.stderr/stdout of the moment, which under
    capsys is a stream closed after the test: put structlog back to its defaults afterwards."""
    yield
    structlog.reset_defaults()
    structlog.contextvars.clear_contextvars()


@pytest.fixture
def runtime_dir() -> Iterator[str]:
    # ipc:// paths are limited to ~107 bytes: pytest's tmp_path can be longer, so use a short folder.
    path = tempfile.mkdtemp(prefix="sz-")
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def cfg(runtime_dir: str) -> Any:
    return config_module.load(None, overrides={"runtime": {"dir": runtime_dir}})


@pytest.fixture
def bus(cfg: Any) -> Iterator[Any]:
    """A running bus (events and frames forwarders) for ``cfg``; yields the config."""
    with in_process_bus(cfg.bus):
        yield cfg
