"""Logging: JSON lines off a terminal, process and pid on every line, module loggers made before setup."""

from __future__ import annotations

import io
import json
import os

import pytest

from services.common import log as log_module

# Made at import time, before any setup(), as module-level loggers are.
EARLY = log_module.get(component="early")


def test_json_lines_with_process_and_pid() -> None:
    out = io.StringIO()
    logger = log_module.setup("vision", "info", "auto", stream=out)
    logger.info("hello", frame=3)
    line = json.loads(out.getvalue().strip().splitlines()[-1])
    assert line["event"] == "hello"
    assert line["process"] == "vision"
    assert line["pid"] == os.getpid()
    assert line["frame"] == 3
    assert line["level"] == "info"
    assert "timestamp" in line and "mono" in line


def test_a_logger_made_before_setup_follows_it() -> None:
    out = io.StringIO()
    log_module.setup("referee", "info", "json", stream=out)
    EARLY.warning("dropped bad message", reason="malformed-body")
    line = json.loads(out.getvalue().strip().splitlines()[-1])
    assert line["event"] == "dropped bad message"
    assert line["component"] == "early"
    assert line["process"] == "referee"


def test_level_filters_and_unknown_level_is_refused() -> None:
    out = io.StringIO()
    logger = log_module.setup("ai", "warning", "json", stream=out)
    logger.info("quiet")
    logger.warning("loud")
    assert [json.loads(x)["event"] for x in out.getvalue().splitlines()] == ["loud"]
    with pytest.raises(ValueError, match="unknown log level"):
        log_module.setup("ai", "chatty", "json", stream=out)


def test_rate_limiter_counts_what_it_held_back() -> None:
    limiter = log_module.RateLimiter(period_s=5.0)
    assert limiter.allow("bad", now=0.0) == (True, 0)
    assert limiter.allow("bad", now=1.0) == (False, 0)
    assert limiter.allow("bad", now=2.0) == (False, 0)
    assert limiter.allow("other", now=2.0) == (True, 0)
    assert limiter.allow("bad", now=5.5) == (True, 2)
