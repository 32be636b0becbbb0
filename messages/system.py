"""Process health: every long-running process publishes a heartbeat at 1 Hz."""

from __future__ import annotations

from .base import Message


class Heartbeat(Message, frozen=True):
    process: str
    pid: int
    seq: int
    #: "ok", "degraded" (running with a problem) or "fault".
    state: str = "ok"
    uptime_s: float = 0.0
    detail: str = ""
    last_error: str = ""
