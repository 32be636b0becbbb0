"""Rate and interval statistics of one topic over a sliding window, judged like openpilot's SubMaster.

Pure: the caller gives the times (publisher stamp and arrival, both monotonic ns), so it is tested
without a bus. ``sanzi hz`` and the console's health panel read topics through it.
"""

from __future__ import annotations

import itertools
import math
from collections import deque
from dataclasses import dataclass

#: alive: the last message arrived within this many expected periods (openpilot: 10).
ALIVE_PERIODS = 10.0
#: on rate: at least this fraction of the expected rate (openpilot: 90 %).
ON_RATE_FRACTION = 0.9
DEFAULT_WINDOW_S = 10.0


@dataclass(frozen=True)
class RateReport:
    """What :class:`RateMeter` measured for one topic."""

    topic: str
    #: messages in the window.
    count: int
    #: (count - 1) / (last stamp - first stamp) in Hz; 0 with fewer than two messages.
    rate_hz: float
    #: intervals between consecutive stamps in the window, seconds (0 when fewer than two messages).
    min_s: float
    max_s: float
    mean_s: float
    std_s: float
    #: the topic table's rate, 0 for event topics.
    expected_hz: float
    #: None for event topics; ``on_rate`` is also None while a live topic has only one message.
    alive: bool | None
    on_rate: bool | None
    #: seconds since the last message arrived (None before the first).
    age_s: float | None
    #: publisher stamps (CLOCK_MONOTONIC ns) of the window's first and last messages.
    first_ns: int
    last_ns: int


class RateMeter:
    """Rate and interval statistics of one topic over a sliding window. Pure: the caller gives the
    times (publisher stamp and arrival, both monotonic ns), so it is tested without a bus."""

    def __init__(self, topic: str, expected_hz: float, window_s: float = DEFAULT_WINDOW_S) -> None:
        if not window_s > 0:
            raise ValueError(f"window must be positive, not {window_s}")
        self.topic = topic
        self.expected_hz = expected_hz
        self.window_ns = int(window_s * 1e9)
        self._stamps: deque[int] = deque()
        self._last_arrival: int | None = None

    def add(self, stamp_ns: int, arrival_ns: int) -> None:
        # a stamp older than the newest (a restarted publisher on another clock, a replay) starts afresh
        if self._stamps and stamp_ns < self._stamps[-1]:
            self._stamps.clear()
        self._stamps.append(stamp_ns)
        self._last_arrival = arrival_ns
        while self._stamps[-1] - self._stamps[0] > self.window_ns:
            self._stamps.popleft()

    def report(self, now_ns: int) -> RateReport:
        stamps = list(self._stamps)
        intervals = [(b - a) / 1e9 for a, b in itertools.pairwise(stamps)]
        if intervals:
            span = (stamps[-1] - stamps[0]) / 1e9
            rate = (len(stamps) - 1) / span if span > 0 else math.inf
            mean = sum(intervals) / len(intervals)
            std = math.sqrt(sum((i - mean) ** 2 for i in intervals) / len(intervals))
            lo, hi = min(intervals), max(intervals)
        else:
            rate = mean = std = lo = hi = 0.0
        age = None if self._last_arrival is None else (now_ns - self._last_arrival) / 1e9
        alive: bool | None = None
        on_rate: bool | None = None
        if self.expected_hz > 0:
            alive = age is not None and age <= ALIVE_PERIODS / self.expected_hz
            # one message says nothing about a rate: unknown unless it is not alive at all
            on_rate = (
                (alive and rate >= ON_RATE_FRACTION * self.expected_hz) if intervals or not alive else None
            )
        return RateReport(
            topic=self.topic,
            count=len(stamps),
            rate_hz=rate,
            min_s=lo,
            max_s=hi,
            mean_s=mean,
            std_s=std,
            expected_hz=self.expected_hz,
            alive=alive,
            on_rate=on_rate,
            age_s=age,
            first_ns=stamps[0] if stamps else 0,
            last_ns=stamps[-1] if stamps else 0,
        )
