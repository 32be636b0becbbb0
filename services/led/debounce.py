"""Button debounce as a pure class: time is passed in, nothing sleeps.

A level counts only once it has held, unchanged, for ``hold_s``: contact bounce (a burst of short edges
when the switch closes or opens) and short glitches (a hand brushing the button, electrical noise) never
make a press. A press is the stable level going from released to pressed; holding the button down, however
long, is one press, and the next press needs a stable release first.

Feed every raw edge with :meth:`Debouncer.update` and call :meth:`Debouncer.poll` at (or after)
:meth:`Debouncer.deadline`, since a level may become stable with no further edge.

>>> d = Debouncer(0.03)
>>> [d.update(True, 0.000), d.update(False, 0.002), d.update(True, 0.004)]
[False, False, False]
>>> d.poll(0.020), d.poll(0.034)
(False, True)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .config import LedConfig


class Debouncer:
    """Debounces one button. ``hold_s`` is ``led.debounce_ms`` / 1000. Not thread-safe."""

    def __init__(self, hold_s: float, *, pressed: bool = False) -> None:
        if hold_s < 0:
            raise ValueError(f"debounce time must not be negative, got {hold_s}")
        self.hold_s = hold_s
        #: the debounced level, the raw level and since when the raw level holds.
        self.stable = pressed
        self.raw = pressed
        self.raw_since = float("-inf")
        #: presses counted so far, and raw edges ignored as bounce or glitch.
        self.presses = 0
        self.edges = 0
        #: when the last counted press began (its first edge of the level that held), seconds.
        self.last_press_at: float | None = None

    def update(self, level: bool, now: float) -> bool:
        """A raw level seen at ``now`` (an edge, or a repeated level). Returns whether a press was
        completed, which can only happen because the *previous* level held long enough before ``now``."""
        pressed = self.poll(now)
        if level != self.raw:
            self.raw, self.raw_since = level, now
            self.edges += 1
        return pressed

    def poll(self, now: float) -> bool:
        """Promote the raw level if it held for ``hold_s`` by ``now``; returns whether that was a press."""
        # The same expression as deadline(): polling at the deadline must promote (no float drift).
        if self.raw != self.stable and now >= self.raw_since + self.hold_s:
            self.stable = self.raw
            if self.stable:
                self.presses += 1
                self.last_press_at = self.raw_since
                return True
        return False

    def deadline(self) -> float | None:
        """When :meth:`poll` may next change something, or None when the level is settled."""
        return self.raw_since + self.hold_s if self.raw != self.stable else None


def debounce_s(led: LedConfig) -> float:
    """The debounce time, seconds: ``led.debounce_ms`` for every button, the simulated one included
    (the simulated person holds the button for real time, not for simulated time, exactly so that it
    meets the same debounce); ``led.sim_debounce_ms`` >= 0 overrides it for the simulated button."""
    if led.driver == "sim" and led.sim_debounce_ms >= 0:
        return led.sim_debounce_ms / 1000.0
    return led.debounce_ms / 1000.0
