"""Configuration of the fault recorder (section [blackbox])."""

from __future__ import annotations

from services.common.section import Section


class BlackboxConfig(Section):
    #: seconds of bus traffic kept before a fault.
    seconds: float = 30.0
    #: seconds after the fault also written (what the stack did about it).
    post_seconds: float = 2.0
    #: at most this many fault recordings are kept; the oldest are deleted first.
    max_files: int = 20
    #: and at most this many bytes of them in all.
    max_bytes: int = 200_000_000
    #: where the recordings go; "" = runtime.fault_dir.
    dir: str = ""
    #: the topics kept (a regular expression, re.search); "" = the logged topics (not camera frames).
    topics: str = ""
    #: the ring buffer holds at most this many bytes (older traffic is dropped first).
    buffer_bytes: int = 64_000_000
    #: for this long after start, faults already present (a game state with an illegal move, a process
    #: in fault) are taken as they are, not as new faults: the recorder just missed their traffic.
    startup_grace_s: float = 3.0
