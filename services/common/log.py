"""structlog, configured once per process.

JSON lines when stdout is not a terminal (under supervisord: one file per process, merged by
``sanzi logs``), a readable console rendering on a terminal. Every line carries the process name and
pid; services bind the game id and message sequence where there is one (``log.bind(game=...)``).
"""

from __future__ import annotations

import logging
import os
import sys
import time
from typing import Any

import structlog

_LEVELS = {"debug": logging.DEBUG, "info": logging.INFO, "warning": logging.WARNING, "error": logging.ERROR}


def setup(process: str, level: str = "info", fmt: str = "auto", stream: Any = None) -> structlog.BoundLogger:
    """Configure structlog for this process and return a logger bound with ``process`` and ``pid``.

    ``fmt`` is "auto" (console on a TTY, JSON otherwise), "json" or "console".
    """
    stream = stream or sys.stdout
    if level not in _LEVELS:
        raise ValueError(f"unknown log level {level!r}; choose one of {', '.join(_LEVELS)}")
    as_json = fmt == "json" or (fmt == "auto" and not _isatty(stream))
    processors: list[Any] = [
        structlog.contextvars.merge_contextvars,
        structlog.processors.add_log_level,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
        _add_monotonic,
        structlog.processors.StackInfoRenderer(),
        structlog.processors.format_exc_info,
    ]
    if as_json:
        processors += [structlog.processors.dict_tracebacks, structlog.processors.JSONRenderer()]
    else:
        processors += [structlog.dev.ConsoleRenderer(colors=_isatty(stream))]
    structlog.configure(
        processors=processors,
        wrapper_class=structlog.make_filtering_bound_logger(_LEVELS[level]),
        logger_factory=structlog.PrintLoggerFactory(file=stream),
        cache_logger_on_first_use=False,
    )
    structlog.contextvars.clear_contextvars()
    structlog.contextvars.bind_contextvars(process=process, pid=os.getpid())
    return structlog.get_logger()


def _add_monotonic(_: Any, __: str, event: dict[str, Any]) -> dict[str, Any]:
    event.setdefault("mono", round(time.monotonic(), 6))
    return event


def _isatty(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


def get(**bound: Any) -> structlog.BoundLogger:
    """A logger with extra bound fields. It is lazy: it takes the configuration that :func:`setup` makes,
    even when created before it (at import time, as module-level loggers are)."""
    return structlog.get_logger(**bound)


class RateLimiter:
    """Lets an event through once per ``period_s`` per key and counts what it held back, so that a flood
    of bad input is logged once with a count, not a thousand times."""

    def __init__(self, period_s: float = 5.0) -> None:
        self.period_s = period_s
        self._last: dict[str, float] = {}
        self._held: dict[str, int] = {}

    def allow(self, key: str, now: float | None = None) -> tuple[bool, int]:
        """Whether to log ``key`` now, and how many were held back since the last time it was logged."""
        now = time.monotonic() if now is None else now
        last = self._last.get(key)
        if last is None or now - last >= self.period_s:
            self._last[key] = now
            return True, self._held.pop(key, 0)
        self._held[key] = self._held.get(key, 0) + 1
        return False, 0
