"""Time control: a deadline on an injectable monotonic clock, and the share of a turn each stage may use."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

Clock = Callable[[], float]
"""Seconds on a monotonic clock (``time.perf_counter`` unless a test injects another)."""

#: Shares of the turn's budget: the VCF search may end this far into the turn, the VCT search this far.
VCF_SHARE: Final = 0.15
VCT_SHARE: Final = 0.35
#: Kept back from the protocol's ``timeout_turn`` for reading, writing, the interpreter's own pauses and a
#: busy machine (with 80 ms kept, the bench's protocol game saw answers take 926 ms of a 1000 ms limit).
SAFETY_MARGIN_S: Final = 0.15
#: ... and at most this fraction of it (so very short turns still leave time to search).
SAFETY_FRACTION: Final = 0.25
#: How much of the remaining match time one move may use when the match clock is tighter than the turn.
MATCH_SHARE: Final = 1 / 25


@dataclass(frozen=True, slots=True)
class Deadline:
    """A point in time on ``clock``; :meth:`passed` is what searches poll."""

    at: float
    clock: Clock = time.perf_counter

    @classmethod
    def after(cls, seconds: float, clock: Clock = time.perf_counter) -> Deadline:
        """The deadline ``seconds`` from now."""
        return cls(clock() + max(0.0, seconds), clock)

    def passed(self) -> bool:
        """Whether the deadline has been reached."""
        return self.clock() >= self.at

    def remaining(self) -> float:
        """Seconds left (0 once passed)."""
        return max(0.0, self.at - self.clock())

    def share(self, fraction: float) -> Deadline:
        """A deadline ``fraction`` of the remaining time from now."""
        now = self.clock()
        return Deadline(now + max(0.0, self.at - now) * fraction, self.clock)


def turn_budget(timeout_turn_ms: int | None, time_left_ms: int | None = None) -> float:
    """Seconds to think about one move under the Gomocup limits: the turn limit less a safety margin, and
    no more than a share of what is left of the match (0 ms per turn means "as fast as possible")."""
    budget = 5.0 if timeout_turn_ms is None else timeout_turn_ms / 1000.0
    if timeout_turn_ms is not None and timeout_turn_ms <= 0:
        budget = 0.05
    budget -= min(SAFETY_MARGIN_S, budget * SAFETY_FRACTION)
    if time_left_ms is not None and time_left_ms > 0:
        budget = min(budget, time_left_ms / 1000.0 * MATCH_SHARE)
    return max(0.01, budget)
